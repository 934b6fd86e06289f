"""Example user trainables for raysweep."""
