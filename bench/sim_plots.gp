# SPDX-License-Identifier: BSD-3-Clause
# Pictures of bench/sim_sweep.sh's CSV files (docs/simulator.md):
#   gnuplot -e "dir='build/sim-sweep'; docs='docs'" bench/sim_plots.gp
# Columns (label first, then ftcoll-sim --csv's, then min/max):
#   6 n, 13 reach, 14 finish, 18 msgs_per_proc, 21 failed (K),
#   31 reach_min, 32 reach_max
if (!exists("dir")) dir = 'build/sim-sweep'
if (!exists("docs")) docs = 'docs'
if (!exists("ext")) ext = 'svg'
term(w, h) = ext eq 'png' \
    ? sprintf("set terminal pngcairo size %d,%d font 'Helvetica,11' background rgb 'white'", w, h) \
    : sprintf("set terminal svg size %d,%d font 'Helvetica,12' dynamic background rgb 'white'", w, h)

set datafile separator ","
eval term(760, 500)
set grid lc rgb "#dddddd"
set key below font ",10" maxrows 4
set logscale x 2
set xtics ("1K" 1024, "2K" 2048, "4K" 4096, "8K" 8192, "16K" 16384, \
           "32K" 32768, "64K" 65536, "128K" 131072, "256K" 262144, \
           "512K" 524288, "1M" 1048576)
set xlabel "P (processes)" offset 0,0.3

# The rows of one configuration (gnuplot breaks lines at skipped rows, so
# filter before plotting rather than with a ternary).
rows(f, lab) = sprintf("< awk -F, '$1 == \"%s\"' %s", lab, f)
sel(lab, col) = strcol(1) eq lab ? column(col) : 1/0

scale = dir.'/scale.csv'
set output docs.'/sim-latency.'.ext
set title "Latency vs P (LogP L=2, o=1, g=1, parallelism 1, f=1, no failures)"
set ylabel "time units until the last live process delivers"
plot rows(scale,"tree-bcast") using 6:13 w lp lw 2 pt 7 lc rgb "#1b9e77" t "tree bcast (binomial)", \
     rows(scale,"corrected-bcast-checked") using 6:13 w lp lw 2 pt 5 lc rgb "#d95f02" t "corrected bcast, checked", \
     rows(scale,"corrected-bcast-opportunistic") using 6:13 w lp lw 2 pt 9 lc rgb "#7570b3" t "corrected bcast, opportunistic d=2", \
     rows(scale,"tree-reduce") using 6:13 w lp lw 2 pt 6 dt 2 lc rgb "#1b9e77" t "tree reduce", \
     rows(scale,"corrected-reduce") using 6:13 w lp lw 2 pt 4 dt 2 lc rgb "#d95f02" t "corrected reduce", \
     rows(scale,"tree-allreduce") using 6:13 w lp lw 2 pt 7 dt 3 lc rgb "#666666" t "tree allreduce", \
     rows(scale,"corrected-allreduce-checked") using 6:13 w lp lw 2 pt 5 dt 3 lc rgb "#e7298a" t "corrected allreduce, checked", \
     rows(scale,"corrected-allreduce-opportunistic") using 6:13 w lp lw 2 pt 9 dt 3 lc rgb "#66a61e" t "corrected allreduce, opportunistic"

set output docs.'/sim-messages.'.ext
set title "Messages per process vs P (same runs)"
set ylabel "messages sent / P"
plot rows(scale,"tree-bcast") using 6:18 w lp lw 2 pt 7 lc rgb "#1b9e77" t "tree bcast", \
     rows(scale,"corrected-bcast-checked") using 6:18 w lp lw 2 pt 5 lc rgb "#d95f02" t "corrected bcast, checked", \
     rows(scale,"corrected-bcast-opportunistic") using 6:18 w lp lw 2 pt 9 lc rgb "#7570b3" t "corrected bcast, opportunistic d=2", \
     rows(scale,"corrected-reduce") using 6:18 w lp lw 2 pt 4 dt 2 lc rgb "#d95f02" t "corrected reduce (Theorem 5)", \
     rows(scale,"tree-allreduce") using 6:18 w lp lw 2 pt 7 dt 3 lc rgb "#666666" t "tree allreduce", \
     rows(scale,"corrected-allreduce-checked") using 6:18 w lp lw 2 pt 5 dt 3 lc rgb "#e7298a" t "corrected allreduce, checked", \
     rows(scale,"corrected-allreduce-opportunistic") using 6:18 w lp lw 2 pt 9 dt 3 lc rgb "#66a61e" t "corrected allreduce, opportunistic (Theorem 7)"

fail = dir.'/failures.csv'
stats fail using (sel("pre-allreduce",6)) nooutput
pn = STATS_max
unset logscale x
set xtics 1
eval term(900, 440)
set output docs.'/sim-failures.'.ext
set multiplot layout 1,2 title sprintf("Latency penalty of K random failures (P=%d, f=8, failure report 100 units after a crash)", pn)
set xlabel "K failed processes"
set ylabel "time units until the last live process delivers"
set title "mean, min and max over the runs"
set key at graph 0.97, graph 0.42 right top font ",9" maxrows 8
plot [-0.5:8.5] rows(fail,"pre-allreduce") using 21:13:31:32 w yerrorlines lw 2 pt 7 lc rgb "#e7298a" t "allreduce, before", \
     rows(fail,"inop-allreduce") using 21:13:31:32 w yerrorlines lw 2 pt 5 dt 2 lc rgb "#7570b3" t "allreduce, during (first 100 units)", \
     rows(fail,"pre-reduce") using 21:13:31:32 w yerrorlines lw 2 pt 4 lc rgb "#d95f02" t "reduce, before", \
     rows(fail,"pre-bcast") using 21:13:31:32 w yerrorlines lw 2 pt 9 lc rgb "#1b9e77" t "bcast, before"
set title "penalty per failure: (mean(K) - mean(0)) / K"
set key inside top right font ",9" maxrows 8
set ylabel "time units per failure"
base(lab) = (strcol(1) eq lab && column(21) == 0) ? column(13) : 1/0
stats fail using (base("pre-allreduce")) nooutput
a0 = STATS_mean
stats fail using (base("pre-reduce")) nooutput
r0 = STATS_mean
stats fail using (base("pre-bcast")) nooutput
b0 = STATS_mean
stats fail using (base("inop-allreduce")) nooutput
i0 = STATS_mean
plot [0.5:8.5] rows(fail,"pre-allreduce") using 21:(column(21) > 0 ? ($13 - a0) / $21 : 1/0) w lp lw 2 pt 7 lc rgb "#e7298a" t "allreduce, before", \
     rows(fail,"inop-allreduce") using 21:(column(21) > 0 ? ($13 - i0) / $21 : 1/0) w lp lw 2 pt 5 dt 2 lc rgb "#7570b3" t "allreduce, during", \
     rows(fail,"pre-reduce") using 21:(column(21) > 0 ? ($13 - r0) / $21 : 1/0) w lp lw 2 pt 4 lc rgb "#d95f02" t "reduce, before", \
     rows(fail,"pre-bcast") using 21:(column(21) > 0 ? ($13 - b0) / $21 : 1/0) w lp lw 2 pt 9 lc rgb "#1b9e77" t "bcast, before"
unset multiplot
