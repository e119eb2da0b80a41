"""Small pieces every view uses: plain text, fitting, the theme, a choice delegate."""
