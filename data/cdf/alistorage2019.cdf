# AliCloud Storage flow sizes (AliStorage2019): one `size_bytes cdf_percent` pair per line,
# piecewise-linear between points.
#
# Provenance: the "AliStorage2019" traffic distribution shipped with the HPCC ns-3 simulator
# (alibaba-edu/High-Precision-Congestion-Control, traffic_gen), which the SeqBalance paper cites
# as [31] for its AliCloud Storage workload (paper §V, Fig. 9: "mostly 1 KB-100 KB"). Values as
# tabulated in the seqbalance spec §5.2 "Workloads (Fig. 9)" (LINEAGE). Mean of the
# piecewise-linear distribution: 40,869.8 B (spec: DERIVED ≈ 40.9 KB).
0 0
4000 22.93
8000 69.21
16000 80.61
32000 90.47
64000 93.53
128000 96.77
256000 97.53
2000000 100
