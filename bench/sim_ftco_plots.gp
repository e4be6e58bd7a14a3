# SPDX-License-Identifier: BSD-3-Clause
# Pictures of bench/sim_ftco_sweep.sh's CSV files (docs/ftco.md):
#   gnuplot -e "dir='build/sim-ftco'; docs='docs'" bench/sim_ftco_plots.gp
#   (and only='spread' for docs/ftco-spread.svg alone)
# Columns (label first, then ftcoll-sim --csv's, then the latency's
# min/max): 6 n, 13 reach, 14 finish, 18 msgs_per_proc, 21 failed,
# 32 latency (FinishTime_last - StartTime_last, ours), 36 paper_latency,
# 37 paper_work, 38 paper_output_spread, 39 paper_max_queue,
# 40 latency_min, 41 latency_max.
if (!exists("dir")) dir = 'build/sim-ftco'
if (!exists("docs")) docs = 'docs'

set datafile separator ","
set terminal svg size 760,500 font 'Helvetica,12' dynamic background rgb 'white'
set grid lc rgb "#dddddd"
set key below font ",10" maxrows 4
set logscale x 2
set xtics ("1K" 1024, "2K" 2048, "4K" 4096, "8K" 8192, "16K" 16384, \
           "32K" 32768, "64K" 65536)
set xlabel "P (processes)" offset 0,0.3

# only='spread' (sim_ftco_sweep.sh --spread-only): the spread picture alone.
if (!exists("only")) only = 'all'
if (only eq 'all') {

rows(f, lab) = sprintf("< awk -F, '$1 == \"%s\"' %s", lab, f)

scale = dir.'/scale.csv'
set output docs.'/ftco-latency.svg'
set title "Fault-free latency (LogP L=10, o=1; k-nomial, best k per P; cf. the paper's Figure 7)"
set ylabel "steps (FinishTime_last - StartTime_last)" noenhanced
plot rows(scale,"ftco-allreduce") using 6:32 w lp lw 2 pt 7 lc rgb "#e7298a" t "ftco allreduce", \
     rows(scale,"ftco-allreduce") using 6:13 w lp lw 1 pt 6 dt 2 lc rgb "#e7298a" t "ftco allreduce, last delivery", \
     rows(scale,"ftco-reduce") using 6:32 w lp lw 2 pt 5 lc rgb "#d95f02" t "ftco reduce", \
     rows(scale,"ftco-bcast") using 6:32 w lp lw 2 pt 9 lc rgb "#1b9e77" t "ftco bcast", \
     rows(scale,"tree-bcast") using 6:32 w lp lw 2 pt 8 dt 3 lc rgb "#1b9e77" t "plain tree bcast (same tree)", \
     rows(scale,"tree-allreduce") using 6:32 w lp lw 2 pt 4 dt 3 lc rgb "#666666" t "plain tree allreduce", \
     rows(scale,"corrected-allreduce") using 6:32 w lp lw 2 pt 11 dt 4 lc rgb "#7570b3" t "corrected allreduce (binomial, f=1, checked)"

# Penalty per inactive process: (mean(K) - fault-free) / K, per P.
inact = dir.'/inactive.csv'
pen(K, col) = sprintf("< awk -F, 'NR > 1 && $1 == \"inactive-0\" { b[$6] = $%d } NR > 1 && $1 == \"inactive-%d\" { print $6 \",\" ($%d - b[$6]) / %d }' %s", col, K, col, K, inact)
set terminal svg size 900,440 font 'Helvetica,12' dynamic background rgb 'white'
set output docs.'/ftco-penalty.svg'
set multiplot layout 1,2 title "ftco allreduce with K inactive processes (random, not the root), per inactive process (cf. Figures 8 and 9)"
set key top right font ",10" maxrows 3
set title "latency penalty"
set ylabel "steps per inactive process"
plot pen(1, 32) using 1:2 w lp lw 2 pt 7 lc rgb "#e7298a" t "K = 1", \
     pen(10, 32) using 1:2 w lp lw 2 pt 5 lc rgb "#7570b3" t "K = 10", \
     pen(100, 32) using 1:2 w lp lw 2 pt 9 lc rgb "#1b9e77" t "K = 100"
set title "work penalty"
set ylabel "messages per process per inactive process"
plot pen(1, 18) using 1:2 w lp lw 2 pt 7 lc rgb "#e7298a" t "K = 1", \
     pen(10, 18) using 1:2 w lp lw 2 pt 5 lc rgb "#7570b3" t "K = 10", \
     pen(100, 18) using 1:2 w lp lw 2 pt 9 lc rgb "#1b9e77" t "K = 100"
unset multiplot

comb = dir.'/combined.csv'
crash(i) = sprintf("< awk -F, '$1 ~ /^i%d-c/ { c = $1; sub(/.*-c/, \"\", c); print c \",\" $32 \",\" $40 \",\" $41 }' %s", i, comb)
set terminal svg size 760,460 font 'Helvetica,12' dynamic background rgb 'white'
set output docs.'/ftco-faults.svg'
unset logscale x
set logscale x 10
set xtics ("0" 0.5, "1" 1, "10" 10)
set xlabel "run-time crashes (uniform in the first 200 steps)"
set ylabel "steps (FinishTime_last - StartTime_last)" noenhanced
set key top left font ",10" maxrows 3
set title "ftco allreduce, P = 4096: inactive processes and run-time crashes (cf. Figure 10)"
plot [0.4:14] crash(0) using ($1 == 0 ? 0.5 : $1):2:3:4 w yerrorlines lw 2 pt 7 lc rgb "#1b9e77" t "0 inactive", \
     crash(1) using ($1 == 0 ? 0.5 : $1):2:3:4 w yerrorlines lw 2 pt 5 lc rgb "#7570b3" t "1 inactive", \
     crash(10) using ($1 == 0 ? 0.5 : $1):2:3:4 w yerrorlines lw 2 pt 9 lc rgb "#e7298a" t "10 inactive"
}

# Table 2's spread rows (spread.csv, labels uniform-W and normal-W):
# the latency and the work measured the paper's way (columns 36
# paper_latency, 37 paper_work) against the input spread W, beside the
# paper's own numbers (its Table 2, P = 65,536).
$paper << EOD
256,151.8,15.3,141.1,14.8
512,150.0,23.0,140.4,21.5
1024,148.8,35.9,139.8,33.7
2048,147.0,62.0,139.0,58.9
4096,145.3,114.4,137.4,108.1
8192,144.0,219.2,139.9,208.8
16384,143.3,428.8,138.1,408.0
EOD
spr = dir.'/spread.csv'
set datafile separator ","
dist(d, col) = sprintf("< awk -F, '$1 ~ /^%s-/ { w = $1; sub(/.*-/, \"\", w); if (w > 0) print w \",\" $%d }' %s", d, col, spr)
eval sprintf("fault_free = %s", system(sprintf("awk -F, '$1 == \"uniform-0\" { print $36 }' %s", spr)))
set terminal svg size 900,440 font 'Helvetica,12' dynamic background rgb 'white'
set output docs.'/ftco-spread.svg'
unset logscale
set logscale x 2
set xtics ("256" 256, "512" 512, "1K" 1024, "2K" 2048, "4K" 4096, "8K" 8192, "16K" 16384)
set xlabel "input spread W (steps)"
set key below font ",10" maxrows 2
set multiplot layout 1,2 title "ftco allreduce with arrival spread, measured the paper's way (cf. Table 2)"
set title "latency"
set ylabel "steps (FinishTime_last - StartTime_last)" noenhanced
plot [200:20000] dist("uniform", 36) using 1:2 w lp lw 2 pt 7 lc rgb "#e7298a" t "uniform [0, W]", \
     dist("normal", 36) using 1:2 w lp lw 2 pt 5 lc rgb "#7570b3" t "normal", \
     $paper using 1:2 w lp lw 1 dt 2 pt 6 lc rgb "#e7298a" t "paper, uniform", \
     $paper using 1:4 w lp lw 1 dt 2 pt 4 lc rgb "#7570b3" t "paper, normal", \
     fault_free w l lw 1 dt 3 lc rgb "#666666" t "all start together"
set title "work"
set logscale y 2
set ylabel "messages per process by its FinishTime"
plot [200:20000] dist("uniform", 37) using 1:2 w lp lw 2 pt 7 lc rgb "#e7298a" t "uniform [0, W]", \
     dist("normal", 37) using 1:2 w lp lw 2 pt 5 lc rgb "#7570b3" t "normal", \
     $paper using 1:3 w lp lw 1 dt 2 pt 6 lc rgb "#e7298a" t "paper, uniform", \
     $paper using 1:5 w lp lw 1 dt 2 pt 4 lc rgb "#7570b3" t "paper, normal"
unset multiplot
