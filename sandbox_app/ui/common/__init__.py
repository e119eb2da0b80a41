"""Small pieces every view uses: plain text, the wheel rule, fitting, one-line notices,
collapsed splitters brought back, the theme, a choice delegate."""
