// Notes module: see README.md.
