"""`react-sandbox eval`: the command, its outputs, each run as it ends, the history, baselines,
shards."""
