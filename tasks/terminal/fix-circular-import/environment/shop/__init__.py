"""Order reporting for the web shop."""
