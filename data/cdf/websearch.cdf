# Web-search flow sizes (the DCTCP web-search distribution): one `size_bytes cdf_percent` pair
# per line, piecewise-linear between points.
#
# Provenance: the web-search workload of DCTCP (Alizadeh et al., SIGCOMM 2010) in the form the
# HPCC ns-3 simulator's traffic_gen ships it (alibaba-edu/High-Precision-Congestion-Control),
# used by the SeqBalance paper as its WebSearch workload (paper §V, Fig. 9: small flows
# < 100 KB mixed with large flows > 10 MB). Values as tabulated in the seqbalance spec §5.2
# "Workloads (Fig. 9)" (LINEAGE). Mean of the piecewise-linear distribution: 1,711,250 B
# (spec: DERIVED ≈ 1.71 MB).
0 0
10000 15
20000 20
30000 30
50000 40
80000 53
200000 60
1000000 70
2000000 80
5000000 90
10000000 97
30000000 100
