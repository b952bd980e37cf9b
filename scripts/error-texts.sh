#!/usr/bin/env bash
# The texts hostbench prints for bad input, recorded so a change to its error types
# can be shown to change none of them: for every case below, stdout, stderr and the
# exit code, byte for byte.
#
#   scripts/error-texts.sh record BIN DIR     record every case's output under DIR
#   scripts/error-texts.sh compare OLD NEW    record both binaries, list the differences
#   scripts/error-texts.sh list               the cases, numbered
#
# `compare` exits 0 when nothing differs, 1 otherwise; it also fails a case that
# panicked or timed out. Each case is a shell line run with `$HB` as the binary, in
# a work directory rebuilt before each binary runs (same path, same job files), so
# the paths in messages are the same for both. Nothing is saved (HOSTBENCH_NO_SAVE,
# and HOSTBENCH_DB points inside the work directory). Every case fails before any
# measurement starts, except the few that say they run a tiny dd to reach the
# store's label check (their stderr is filtered to hostbench's own lines).
set -u

WORK=${ERROR_TEXTS_WORK:-${TMPDIR:-/tmp}/hostbench-error-texts}

cases() {
	cat <<'EOF'
# fio: the command line
$HB fio
$HB fio -
$HB fio --frobnicate --name=x
$HB fio -x
$HB fio --rate_iops=100 --name=x
$HB fio --output-format=xml --name=x
$HB fio --output-format=json,yaml --name=x
$HB fio --eta=sometimes --name=x
$HB fio --output
$HB fio --section
$HB fio --name
$HB fio --name=x --bs
$HB fio --rw=read
$HB fio --section=zzz ok.fio
$HB fio missing.fio
# fio: option values
$HB fio --parse-only --name=x --bs=0
$HB fio --parse-only --name=x --bs=2g
$HB fio --parse-only --name=x --bs=4q
$HB fio --parse-only --name=x --bs=4kk
$HB fio --parse-only --name=x --bs=1,2,3,4
$HB fio --parse-only --name=x --bs=4k,0
$HB fio --parse-only --name=x --blocksize=0x
$HB fio --parse-only --name=x --bsrange=4k
$HB fio --parse-only --name=x --bsrange=64k-4k
$HB fio --parse-only --name=x --bsrange=4k-zz
$HB fio --parse-only --name=x --bssplit=4k/80:8k/40
$HB fio --parse-only --name=x --bssplit=4k/50:8k/40
$HB fio --parse-only --name=x --bssplit=4k/x:8k
$HB fio --parse-only --name=x --bssplit=0/50:8k/50
$HB fio --parse-only --name=x --bssplit=1k:2k:3k:4k:5k:6k:7k:8k:9k:10k:11k:12k:13k:14k:15k:16k:17k:18k:19k:20k:21k:22k:23k:24k:25k:26k:27k:28k:29k:30k:31k:32k:33k:34k:35k:36k:37k:38k:39k:40k:41k:42k:43k:44k:45k:46k:47k:48k:49k:50k:51k:52k:53k:54k:55k:56k:57k:58k:59k:60k:61k:62k:63k:64k:65k
$HB fio --parse-only --name=x --rw=trim
$HB fio --parse-only --name=x --rw=randread:8
$HB fio --parse-only --name=x --rw=sideways
$HB fio --parse-only --name=x --readwrite=
$HB fio --parse-only --name=x --rwmixread=101
$HB fio --parse-only --name=x --rwmixwrite=x
$HB fio --parse-only --name=x --size=0%
$HB fio --parse-only --name=x --size=150%
$HB fio --parse-only --name=x --size=5q
$HB fio --parse-only --name=x --size=99999999999999999999
$HB fio --parse-only --name=x --size=99999999p
$HB fio --parse-only --name=x --size=1.5e400
$HB fio --parse-only --name=x --io_size=x
$HB fio --parse-only --name=x --filesize=1z
$HB fio --parse-only --name=x --numjobs=0
$HB fio --parse-only --name=x --numjobs=100000
$HB fio --parse-only --name=x --iodepth=0
$HB fio --parse-only --name=x --iodepth_batch=x
$HB fio --parse-only --name=x --ioengine=posixaio
$HB fio --parse-only --name=x --direct=maybe
$HB fio --parse-only --name=x --buffered=2
$HB fio --parse-only --name=x --runtime=soon
$HB fio --parse-only --name=x --runtime=99999999999
$HB fio --parse-only --name=x --runtime=10y
$HB fio --parse-only --name=x --ramp_time=-1
$HB fio --parse-only --name=x --startdelay=x
$HB fio --parse-only --name=x --randseed=abc
$HB fio --parse-only --name=x --kb_base=512
$HB fio --parse-only --name=x --percentile_list=101
$HB fio --parse-only --name=x --percentile_list=1:2:3:4:5:6:7:8:9:10:11:12:13:14:15:16:17:18:19:20:21
$HB fio --parse-only --name=x --nrfiles=0
$HB fio --parse-only --name=x --loops=0
$HB fio --parse-only --name=x --fsync=-1
$HB fio --parse-only --name=x --time_based=2
$HB fio --parse-only --bs=0 --name=x
# fio: job files
$HB fio noclose.fio
$HB fio emptyname.fio
$HB fio before.fio
$HB fio include_before.fio
$HB fio include_section.fio
$HB fio include_loop.fio
$HB fio --parse-only include_self.fio
$HB fio include_missing.fio
$HB fio nokey.fio
$HB fio var_unclosed.fio
$HB fio var_bad.fio
$HB fio arith.fio
$HB fio after_bracket.fio
$HB fio global_unknown.fio
$HB fio rw_bad.fio
$HB fio bssplit_bad.fio
$HB fio valueless.fio
$HB fio --output-format=json rw_bad.fio
$HB fio ok.fio rw_bad.fio
$HB fio sub/include_parent.fio
# fio: jobs that cannot be laid out
$HB fio time_based.fio
$HB fio size_percent.fio
$HB fio no_size.fio
$HB fio small_file.fio
$HB fio no_file.fio
$HB fio device.fio
$HB fio --name=x --rw=write --filename=/dev/loop0 --size=1m
$HB fio --name=x --size=4k --directory=nodir
# fio: failures while running (exit 1): a file that cannot be laid out, an --output
# that cannot be written (after a 16 KiB job)
$HB fio --name=x --size=4k --filename=/proc/hostbench-no-such-file
$HB fio --name=x --size=16k --filename=out.dat --output=nodir/report.txt
# fio through a symlink named fio
ln -sf "$HB" ./fio && ./fio --bs=0 --name=x
# unixbench
$HB unixbench -i
$HB unixbench -i 0
$HB unixbench -i x
$HB unixbench -c
$HB unixbench -c 0
$HB unixbench -c 5000
$HB unixbench -z
$HB unixbench nosuchtest
$HB unixbench -q -c 1 dhry2reg nosuchtest
# redis-benchmark
$HB redis-benchmark -c x
$HB redis-benchmark -n x
$HB redis-benchmark --frobnicate
$HB redis-benchmark -t
$HB redis-benchmark -P
$HB redis-benchmark -d x
$HB redis-benchmark -p 99999
# iperf3
$HB iperf3 -c h -P 500
$HB iperf3 -c h --frobnicate
$HB iperf3 -c h -t
$HB iperf3 -c h -l 0
$HB iperf3 -c h -R --bidir
$HB iperf3 -c h -f q
$HB iperf3 -c h extra
$HB iperf3 -t 5
# hostbench run: --redis URLs
$HB run --redis notaurl
$HB run --redis rediss://h
$HB run --redis http://h
$HB run --redis redis://
$HB run --redis redis://u@h
$HB run --redis redis://:secret@h:0
$HB run --redis redis://h:99999
$HB run --redis redis://h:x
$HB run --redis 'redis://[::1'
$HB run --redis 'redis://[::1]x'
$HB run --redis redis://h/abc
$HB run --redis redis://h/100000
$HB run --redis 'redis://h?x=1'
$HB run --redis 'redis://ho$t'
$HB run --redis 'redis://u:%zz@h'
$HB run --redis 'redis://%zz:p@h'
$HB run --redis unix://rel/path
$HB run --redis 'unix:///s.sock?x=1'
# hostbench run: --peer
$HB run --peer http://h
$HB run --peer '[::1'
$HB run --peer '[::1]x'
$HB run --peer :80
$HB run --peer h:0
$HB run --peer h:x
$HB run --peer 'ho$t'
$HB run --peer no.such.host.invalid
# labels and dates (the store's parsers)
$HB history --label vm
$HB history --label =a
$HB history --label 'v m=a'
$HB history --since yesterday
$HB history --until 2026-13-01
$HB history --since 2026-11-29T25:00
$HB history --since 1969-12-31
$HB compare label:vm label:x=y
$HB cpu --label vm
$HB soak --label x
HOSTBENCH_DEBUG=1 HOSTBENCH_NO_SAVE= HOSTBENCH_LABEL=vm $HB dd if=/dev/zero of=/dev/null count=1 2>&1 | grep '^hostbench:'
HOSTBENCH_DEBUG=1 HOSTBENCH_NO_SAVE= HOSTBENCH_LABEL=vm=a,vm=b $HB dd if=/dev/zero of=/dev/null count=1 2>&1 | grep '^hostbench:'
HOSTBENCH_DEBUG=1 HOSTBENCH_NO_SAVE= HOSTBENCH_LABEL='v m=a' $HB dd if=/dev/zero of=/dev/null count=1 2>&1 | grep '^hostbench:'
# hostbench redis, soak, net (a soak's start time masked)
$HB redis --threads x
$HB redis -c 0 --time 1s
$HB redis --time soon
$HB soak --every soon
$HB soak --every 1h --for 2h --time 1s -- fio
$HB soak --every 1h --for 2h --time 1s -- frobnicate
$HB soak --every 1h --for 2h --time 1s -- fio --bs=0 --name=x | sed -E 's/from [0-9-]+ [0-9:]+ UTC/from DATE/'
$HB soak --every 1h --for 2h --time 1s -- fio rw_bad.fio | sed -E 's/from [0-9-]+ [0-9:]+ UTC/from DATE/'
$HB net --time soon TCP_STREAM 127.0.0.1
$HB net BOGUS 127.0.0.1
$HB net serve --port x
EOF
}

# The job files the cases read.
setup() {
	rm -rf "$WORK/work"
	mkdir -p "$WORK/work/sub"
	cd "$WORK/work" || exit 1
	w() { printf '%b' "$2" >"$1"; }
	w ok.fio '[ok]\nrw=read\nsize=1m\nfilename=ok.dat\n'
	w noclose.fio '[job\nrw=read\n'
	w emptyname.fio '[ ]\nrw=read\n'
	w before.fio 'bs=4k\n[job]\n'
	w include_before.fio 'include common.fio\n[job]\n'
	w common.fio 'bs=8k\n'
	w include_section.fio '[job]\ninclude with_section.fio\n'
	w with_section.fio 'bs=4k\n[other]\n'
	w include_loop.fio '[job]\ninclude loop.inc\n'
	w loop.inc 'bs=4k\ninclude loop.inc\n'
	w include_self.fio '[job]\ninclude include_self.fio\n'
	w include_missing.fio '[job]\ninclude nope.fio\n'
	w nokey.fio '[job]\n=4k\n'
	w var_unclosed.fio '[job]\nfilename=${HOME\n'
	w var_bad.fio '[job]\nsize=$nope\n'
	w arith.fio '[job]\nsize=(8*$mb_memory)\n'
	w after_bracket.fio '[job] frobnicate\n'
	w global_unknown.fio '[global]\nrate_iops=100\n[job]\n'
	w rw_bad.fio '; a comment\n[job]\nrw=sideways\n'
	w bssplit_bad.fio '[job]\nbssplit=4k/80:8k/40\n'
	w valueless.fio '[job]\nbs\n'
	w sub/include_parent.fio '[job]\ninclude ../rw_bad_inc.fio\n'
	w rw_bad_inc.fio 'rw=randread:4\n'
	w time_based.fio '[job]\ntime_based\nsize=1m\nfilename=t.dat\n'
	w size_percent.fio '[job]\nsize=50%\nfilename=absent.dat\n'
	w no_size.fio '[job]\nfilename=absent.dat\n'
	w small_file.fio '[job]\nsize=1k\nbs=4k\nfilename=s.dat\n'
	w no_file.fio '[job]\nfilename=:\nsize=1m\n'
	w device.fio '[job]\nrw=write\nfilename=/dev/loop0\nsize=1m\n'
}

record() {
	local bin=$1 out=$2 n=0 line
	rm -rf "$out"
	mkdir -p "$out"
	setup
	while IFS= read -r line; do
		[[ -z $line || $line == \#* ]] && continue
		n=$((n + 1))
		printf '%s\n' "$line" >"$out/$n.cmd"
		HB=$bin HOSTBENCH_NO_SAVE=1 HOSTBENCH_DB="$WORK/work/results.db" \
			timeout 60 bash -o pipefail -c "$line" >"$out/$n.out" 2>"$out/$n.err" </dev/null
		echo $? >"$out/$n.rc"
	done < <(cases)
	echo "$n cases recorded in $out" >&2
}

compare() {
	record "$1" "$WORK/old"
	record "$2" "$WORK/new"
	local differ=0 bad=0 n=0 f i
	for f in "$WORK"/old/*.cmd; do
		i=$(basename "$f" .cmd)
		n=$((n + 1))
		for s in out err rc; do
			if ! cmp -s "$WORK/old/$i.$s" "$WORK/new/$i.$s"; then
				echo "case $i ($(cat "$f")): $s differs" >&2
				diff "$WORK/old/$i.$s" "$WORK/new/$i.$s" | head -20 >&2
				differ=$((differ + 1))
			fi
		done
		if grep -q 'panicked' "$WORK/new/$i.err" || [[ $(cat "$WORK/new/$i.rc") == 124 ]]; then
			echo "case $i ($(cat "$f")): panicked or timed out" >&2
			bad=$((bad + 1))
		fi
	done
	echo "$n cases, $differ differences, $bad panics or timeouts"
	echo "exit codes: $(cat "$WORK"/new/*.rc | sort -n | uniq -c | awk '{printf "%s×%s ", $1, $2}')"
	[[ $differ == 0 && $bad == 0 ]]
}

case ${1:-} in
record) record "$(realpath "$2")" "$(realpath -m "$3")" ;;
compare) compare "$(realpath "$2")" "$(realpath "$3")" ;;
list) cases | grep -v '^#' | grep -v '^$' | cat -n ;;
*)
	sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
	;;
esac
