"""The command line: `react-sandbox` (main.py dispatches), `run`, `eval`, and the terminal they
print to."""
