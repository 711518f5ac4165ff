"""One module per family of generated terminal task; each defines `FAMILY`."""
