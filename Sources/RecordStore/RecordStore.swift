// RecordStore module: see README.md.
