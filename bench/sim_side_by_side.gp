# SPDX-License-Identifier: BSD-3-Clause
# The picture of bench/sim_side_by_side.sh's side.csv (docs/ftco.md,
# "Side by side with the corrected family"):
#   gnuplot -e "csv='build/sim-side/side.csv'; docs='docs'" bench/sim_side_by_side.gp
# Columns: 1 variant, 2 coll, 3 P, 4 inactive, 5 crashes, 6 f, 7 runs,
# 8 latency (mean), 9 min, 10 max, 11 messages per process.
# One row per collective: latency and messages per process against the
# number of inactive processes (0 drawn at 0.5 on the log axis), one
# colour per P, ftco solid, corrected (f = the number of faults) dashed.
if (!exists("csv")) csv = 'build/sim-side/side.csv'
if (!exists("docs")) docs = 'docs'

set datafile separator ","
set terminal svg size 960,1080 font 'Helvetica,11' dynamic background rgb 'white'
set output docs.'/ftco-side.svg'
set grid lc rgb "#dddddd"
set logscale x 10
set logscale y 10
set xtics ("0" 0.5, "1" 1, "10" 10, "100" 100)
set xrange [0.4:140]

pts(v, c, p, col) = sprintf("< awk -F, '$1 == \"%s\" && $2 == \"%s\" && $3 == %d && $5 == 0 { print ($4 == 0 ? 0.5 : $4) \",\" $%d }' %s", v, c, p, col, csv)
colour(p) = p == 1024 ? "#1b9e77" : p == 4096 ? "#d95f02" : p == 16384 ? "#7570b3" : "#e7298a"
lab(p) = p == 1024 ? "1K" : p == 4096 ? "4K" : p == 16384 ? "16K" : "64K"

set multiplot layout 3,2 title "ftco vs corrected under the same faults (LogP L=10, o=1; transport reports after 100 steps; corrected f = faults, at least 1)"
do for [c in "reduce bcast allreduce"] {
    set title (c.": latency") noenhanced
    set ylabel "steps (FinishTime_last - StartTime_last)" noenhanced
    set xlabel "inactive processes"
    if (c eq "reduce") { set key bottom right font ",9" maxrows 4 } else { unset key }
    plot for [p in "1024 4096 16384 65536"] pts("ftco", c, p+0, 8) using 1:2 w lp lw 2 pt 7 lc rgb colour(p+0) t "ftco ".lab(p+0), for [p in "1024 4096 16384 65536"] pts("corrected", c, p+0, 8) using 1:2 w lp lw 2 pt 6 dt 2 lc rgb colour(p+0) t "corrected ".lab(p+0)
    set title (c.": messages per process") noenhanced
    set ylabel "messages per process"
    unset key
    plot for [p in "1024 4096 16384 65536"] pts("ftco", c, p+0, 11) using 1:2 w lp lw 2 pt 7 lc rgb colour(p+0) t "ftco ".lab(p+0), for [p in "1024 4096 16384 65536"] pts("corrected", c, p+0, 11) using 1:2 w lp lw 2 pt 6 dt 2 lc rgb colour(p+0) t "corrected ".lab(p+0)
}
unset multiplot
