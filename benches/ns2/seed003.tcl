# Seed 003 (Tsang & Chang, TCP Vegas fairness) section 3.1 in a real ns-2 (Debian's ns2
# 2.35: `apt-get install ns2`), to check the simulator's stack = "ns2" Vegas against ns-2
# itself. Written for tcpfair from the paper's description; not part of any ns-2 release.
#
#   ns benches/ns2/seed003.tcl X2_MS ALPHA BETA [WINDOW_INIT] [DURATION_S]
#
# S1 -10 Mbit/s 1 ms- R1 -1.5 Mbit/s 1 ms, RED 15/45, limit 100- R2 -10 Mbit/s 1 ms- D1
# S2 -10 Mbit/s X2 ms- R1                                         R2 -10 Mbit/s 1 ms- D2
# Agent/TCP/Vegas (packetSize_ 1000, window_ 30) to Agent/TCPSink, FTP, both at 0 s.
# Prints: conn. 1 and conn. 2 kbit/s over 10 s .. DURATION (packets acknowledged x 8000
# bits), both cwnd_ at the end, both retransmission counts. WINDOW_INIT sets windowInit_
# (ns-2.35 default 2; 1 before 2001-05-26), as the simulator's `params.window_init`.
set x2 [lindex $argv 0]
set alpha [lindex $argv 1]
set beta [lindex $argv 2]
if {$argc > 3} { Agent/TCP set windowInit_ [lindex $argv 3] }
set dur 60.0
if {$argc > 4} { set dur [lindex $argv 4] }
set ns [new Simulator]
set s1 [$ns node]; set s2 [$ns node]; set r1 [$ns node]; set r2 [$ns node]
set d1 [$ns node]; set d2 [$ns node]
Queue/RED set thresh_ 15
Queue/RED set maxthresh_ 45
$ns duplex-link $s1 $r1 10Mb 1ms DropTail
$ns duplex-link $s2 $r1 10Mb ${x2}ms DropTail
$ns duplex-link $r1 $r2 1.5Mb 1ms RED
$ns queue-limit $r1 $r2 100
$ns duplex-link $r2 $d1 10Mb 1ms DropTail
$ns duplex-link $r2 $d2 10Mb 1ms DropTail
proc conn {src dst} {
    global ns alpha beta
    set t [new Agent/TCP/Vegas]
    $t set window_ 30
    $t set packetSize_ 1000
    $t set v_alpha_ $alpha
    $t set v_beta_ $beta
    set k [new Agent/TCPSink]
    $ns attach-agent $src $t
    $ns attach-agent $dst $k
    $ns connect $t $k
    set f [new Application/FTP]
    $f attach-agent $t
    $ns at 0.0 "$f start"
    return $t
}
set t1 [conn $s1 $d1]
set t2 [conn $s2 $d2]
set a10 {}
proc mark {} {
    global t1 t2 a10
    set a10 [list [$t1 set ack_] [$t2 set ack_]]
}
proc done {} {
    global t1 t2 a10 dur
    set w [expr {$dur - 10.0}]
    set k1 [expr {([$t1 set ack_] - [lindex $a10 0]) * 8.0 / $w}]
    set k2 [expr {([$t2 set ack_] - [lindex $a10 1]) * 8.0 / $w}]
    puts [format "%.1f %.1f %.2f %.2f %d %d" $k1 $k2 [$t1 set cwnd_] [$t2 set cwnd_] \
        [$t1 set nrexmit_] [$t2 set nrexmit_]]
    exit 0
}
$ns at 10.0 "mark"
$ns at $dur "done"
$ns run
