"""The Python API behind every command: each function takes paths and options and returns data (records and reports); nothing here prints."""
