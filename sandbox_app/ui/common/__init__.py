"""Small pieces every view uses: plain text, the wheel rule, fitting, one-line notices, the
theme, a choice delegate."""
