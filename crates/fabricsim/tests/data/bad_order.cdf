# Sizes go back down on line 4.
0 0
100 0.5
50 1
