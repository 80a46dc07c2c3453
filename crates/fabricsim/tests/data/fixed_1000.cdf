# Every flow is exactly 1000 B: a point mass (two rows with the same size).
1000 0
1000 1
