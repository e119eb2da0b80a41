"""One rule per kind of untrusted text: reading files, regexes from files, Markdown out."""
