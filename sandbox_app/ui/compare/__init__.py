"""The comparison: lanes side by side, the table, exports, prices, the test set."""
