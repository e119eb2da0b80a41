"""Small pieces every view uses: plain text, the wheel rule, fitting, the theme, a choice
delegate."""
