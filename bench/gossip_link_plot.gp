# SPDX-License-Identifier: BSD-3-Clause
# Figures 4 and 7 from bench/gossip_figures.sh's data (docs/gossip.md): the
# largest error over the iterations after one permanent link failure that
# both ends handle at the iteration named (the paper's setup).
#   gnuplot -e "dir='build/gossip-figures'; docs='docs'" bench/gossip_link_plot.gp
if (!exists("dir")) dir = 'build/gossip-figures'
if (!exists("docs")) docs = 'docs'
set terminal svg size 760,500 font 'Helvetica,12' dynamic background rgb 'white'
set grid lc rgb "#dddddd"
set key below font ",10" maxrows 4
set logscale y
set format y "1e%T"
unset logscale x
set output docs.'/gossip-link-failure.svg'
unset logscale x
set xlabel "iteration"
set ylabel "largest relative error (all processes)"
set title "One permanent link failure, 6-D hypercube, same seed (Figures 4 and 7)"
# The first 400 iterations: a run that never settles traces up to its cap.
set xrange [0:400]
plot dir.'/link-PF75.dat' u 1:2 w l lw 2 lc rgb "#e41a1c" t "push-flow, link 0-1 fails at 75", \
     dir.'/link-PF175.dat' u 1:2 w l lw 2 lc rgb "#ff7f00" t "push-flow, fails at 175", \
     dir.'/link-PCF75.dat' u 1:2 w l lw 2 lc rgb "#377eb8" t "PCF, fails at 75", \
     dir.'/link-PCF175.dat' u 1:2 w l lw 2 lc rgb "#4daf4a" t "PCF, fails at 175", \
     dir.'/link-none.dat' u 1:2 w l lw 1 dt 2 lc rgb "black" t "PCF, no failure"

set autoscale x
