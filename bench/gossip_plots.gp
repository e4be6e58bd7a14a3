# SPDX-License-Identifier: BSD-3-Clause
# Pictures of bench/gossip_figures.sh's data (docs/gossip.md):
#   gnuplot -e "dir='build/gossip-figures'; docs='docs'" bench/gossip_plots.gp
if (!exists("dir")) dir = 'build/gossip-figures'
if (!exists("docs")) docs = 'docs'
set terminal svg size 760,500 font 'Helvetica,12' dynamic background rgb 'white'
set grid lc rgb "#dddddd"
set key below font ",10" maxrows 4
set logscale y
set format y "1e%T"

# Figures 3 and 6: final accuracy versus n.
set output docs.'/gossip-accuracy.svg'
set logscale x 2
set xlabel "n (processes)"
set ylabel "largest relative error"
set title "Final accuracy, target 1e-15 (push-flow: Figure 3; PCF: Figure 6)"
# Sorted by n: a sweep done in parts (gossip_figures.sh --keep) adds sizes in any order.
rows(a, s, o) = sprintf("< awk '$1 == \"%s\" && $2 == \"%s\" && $3 == \"%s\"' %s/accuracy.dat | sort -g -k4,4", a, s, o, dir)
plot rows("push-flow", "hypercube", "avg") u 4:5 w lp lw 2 t "push-flow hypercube avg", \
     rows("push-flow", "hypercube", "sum") u 4:5 w lp lw 2 t "push-flow hypercube sum", \
     rows("push-flow", "torus3d", "avg") u 4:5 w lp lw 2 t "push-flow torus avg", \
     rows("push-flow", "torus3d", "sum") u 4:5 w lp lw 2 t "push-flow torus sum", \
     rows("pcf", "hypercube", "avg") u 4:5 w lp lw 2 dt 2 t "PCF hypercube avg", \
     rows("pcf", "hypercube", "sum") u 4:5 w lp lw 2 dt 2 t "PCF hypercube sum", \
     rows("pcf", "torus3d", "avg") u 4:5 w lp lw 2 dt 2 t "PCF torus avg", \
     rows("pcf", "torus3d", "sum") u 4:5 w lp lw 2 dt 2 t "PCF torus sum"

# Figures 4 and 7: bench/gossip_link_plot.gp (drawn on its own too).
load 'bench/gossip_link_plot.gp'

# Iterations and messages to 1e-15 versus n.
set output docs.'/gossip-iterations.svg'
set autoscale x
set logscale x 2
unset logscale y
set format y "%g"
set xlabel "n (processes)"
set ylabel "iterations (largest) / messages per process"
set title "Cost to 1e-15 on the hypercube (at most 1500 iterations)"
it(a) = sprintf("< awk '$1 == \"%s\"' %s/iterations.dat | sort -g -k2,2", a, dir)
plot it("push-sum") u 2:3 w lp lw 2 t "push-sum iterations", \
     it("push-flow") u 2:3 w lp lw 2 t "push-flow iterations", \
     it("pcf") u 2:3 w lp lw 2 t "PCF iterations", \
     it("pcf") u 2:4 w lp lw 2 dt 2 t "PCF messages/process"
