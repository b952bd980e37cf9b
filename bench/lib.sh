# Shared by the bench/*.sh comparisons: alternate hostbench and a peer RUNS times on
# the same command and print the medians and their ratio (hostbench / peer).

# Benchmark runs are not results to keep: personalities and native commands alike
# leave the user's results database alone (HOSTBENCH_NO_SAVE, see docs/store.md).
export HOSTBENCH_NO_SAVE=1

median() { sort -g | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }

# compare_case NAME EXTRACT HOSTBENCH-COMMAND... -- PEER-COMMAND...
# EXTRACT is a shell snippet that reads a report on stdin and prints one number.
compare_case() {
  local name=$1 extract=$2
  shift 2
  compare_readers "$name" "$extract" "$extract" "$@"
}

# compare_readers NAME READ-OURS READ-PEER HOSTBENCH-COMMAND... -- PEER-COMMAND...
# The same with one reader per side, where the two reports differ.
compare_readers() {
  local name=$1 read_ours=$2 read_peer=$3
  shift 3
  local ours=() peer=()
  while [ "$1" != "--" ]; do ours+=("$1"); shift; done
  shift
  peer=("$@")
  local a=() b=()
  for _ in $(seq "$RUNS"); do
    a+=("$("${ours[@]}" | eval "$read_ours")")
    b+=("$("${peer[@]}" | eval "$read_peer")")
  done
  local ma mb
  ma=$(printf '%s\n' "${a[@]}" | median)
  mb=$(printf '%s\n' "${b[@]}" | median)
  printf '%-36s %12.2f %12.2f %8.3f   (hostbench: %s; peer: %s)\n' "$name" "$ma" "$mb" \
    "$(awk -v x="$ma" -v y="$mb" 'BEGIN {print x/y}')" "${a[*]}" "${b[*]}"
}
