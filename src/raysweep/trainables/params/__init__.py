"""Built-in trainables' parameters: names, aliases, keys raysweep owns, values checked up front."""
