// FUSE module: see README.md.
