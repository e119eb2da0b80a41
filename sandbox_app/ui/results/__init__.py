"""What an evaluation looks like to the person reading it: the results matrix, the chart."""
