#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every bad input: one line on stderr naming the problem and a fix, exit 2,
# nothing created, nothing left behind.
. "$(dirname "$0")/../lib/common.sh"

expect_usage_error "unknown transport" run -t pipf -n 10
expect_usage_error "newline in a name stays one line" run -t $'pi\npe' -n 10
expect_usage_error "unknown pattern" run -t null -p pingpnog -n 10
expect_usage_error "size 0" run -t null -s 0 -n 10
expect_usage_error "size below header" run -t null -s 15 -n 10
expect_usage_error "size not a number" run -t null -s 4q -n 10
expect_usage_error "count 0" run -t null -n 0
expect_usage_error "count garbage" run -t null -n lots
expect_usage_error "CPU that does not exist" run -t null --pin 0:4095 -n 10
expect_usage_error "pin garbage" run -t null --pin sideways -n 10
expect_usage_error "sched without priority" run -t null --sched fifo -n 10
expect_usage_error "unknown option" run -t null --frobnicate -n 10
expect_usage_error "option without value" run -t null -n
expect_usage_error "unknown -O key" run -t null -O no-such-key=1 -n 10
expect_usage_error "-O without =" run -t null -O pipe-size -n 10
expect_usage_error "bad format" run -t null -f yaml -n 10
expect_usage_error "bad endpoints" run -t null -e fibers -n 10
expect_usage_error "unknown command" frobnicate
expect_usage_error "clients 0" run -t null --clients 0 -n 10
expect_usage_error "duration garbage" run -t null -d soon
expect_usage_error "max-time garbage" run -t null -n 10 --max-time soon
expect_usage_error "plan too large" run -t null,pipe,fifo -p pingpong,stream -s 16..4k -e process,thread --pin same,split,none --think 1..2048 --rate 1/s,2/s,5/s,10/s,100/s,1000/s -n 10
if "$IPCLAB" list | grep -q '^  pipe '; then
	expect_usage_error "pipe-size not a size" run -t pipe -O pipe-size=lots -n 10
fi
if "$IPCLAB" list | grep -q '^  posix-mq '; then
	expect_usage_error "size over posix-mq limit" run -t posix-mq -s 64M -n 10
fi
if "$IPCLAB" list | grep -q '^  barrier '; then
	expect_usage_error "thread-only transport in process mode" run -t barrier -e process -n 10
fi
# the between-hosts options given by hand: checked before anything runs
sec=0123456789abcdef0123456789abcdef
expect_usage_error "tcp -O listen not an address" run -t tcp -O listen=xyz -O secret=$sec -n 10
expect_usage_error "tcp -O connect without a port" run -t tcp -O connect=10.0.0.1 -O secret=$sec -n 10
expect_usage_error "udp -O connect without a secret" run -t udp -O connect=10.0.0.1:9 -n 10
expect_usage_error "zmq-tcp -O listen and -O connect" run -t zmq-tcp -O listen=::1 -O connect=[::1]:9 -O secret=$sec -n 10
expect_usage_error "nng-tcp -O connect port 0" run -t nng-tcp -O connect=10.0.0.1:0 -O secret=$sec -n 10
expect_usage_error "tcp -O secret alone" run -t tcp -O secret=$sec -n 10
finish
