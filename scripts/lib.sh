# shellcheck shell=bash
# Helpers shared by bin/rlm-mcp and bin/test. Source this file; don't run it.
# Every message goes to stderr: in stdio mode the launcher's stdout belongs to MCP.

RLM_MIN_JAVA=21
RLM_MIN_PYTHON=3.10

# jar_is_stale ROOT: true when ROOT/target/rlm-mcp.jar is missing, or anything under ROOT/src/main
# (files, or directories whose entries changed) or ROOT/pom.xml is newer than it.
jar_is_stale() {
  local root=$1 jar=$1/target/rlm-mcp.jar
  [[ -f $jar ]] || return 0
  [[ -d $root/src/main ]] || return 1 # a jar shipped without sources
  [[ -n $(find "$root/src/main" "$root/pom.xml" -newer "$jar" -print -quit 2>/dev/null) ]]
}

# java_version HOME: print the full Java version of the JDK at HOME (e.g. 25.0.3).
# Reads the `release` file (no JVM start); falls back to `java -version`.
java_version() {
  local home=$1 line ver=
  if [[ -r $home/release ]]; then
    while IFS= read -r line; do
      if [[ $line == JAVA_VERSION=* ]]; then
        ver=${line#JAVA_VERSION=}
        ver=${ver//\"/}
        break
      fi
    done <"$home/release"
  fi
  if [[ -z $ver ]]; then
    ver=$("$home/bin/java" -version 2>&1 </dev/null | sed -n '1s/.*version "\([^"]*\)".*/\1/p') || true
  fi
  [[ -n $ver ]] && printf '%s\n' "$ver"
}

# java_major VERSION: print the feature release of a version string (1.8.0_402 -> 8, 25-ea -> 25).
java_major() {
  local v=${1#1.}
  printf '%s\n' "${v%%[!0-9]*}"
}

# resolve_path PATH: print PATH with every symlink resolved.
resolve_path() {
  readlink -f "$1" 2>/dev/null || {
    local p=$1 link
    while [[ -L $p ]]; do
      link=$(readlink "$p")
      if [[ $link == /* ]]; then p=$link; else p=${p%/*}/$link; fi
    done
    printf '%s\n' "$p"
  }
}

# find_jdk: print the JAVA_HOME of a JDK >= 21. Tries $JAVA_HOME, then `java` on PATH,
# then the newest JDK in the usual install directories. Returns 1 with a message if none.
find_jdk() {
  local home ver major best="" best_major=0 java_bin
  local -a seen=() # "home (version)" of every JDK looked at, for the error message

  # 1 and 2: an explicit JAVA_HOME, then the java on PATH, each taken if new enough.
  local -a first=()
  [[ -n ${JAVA_HOME:-} ]] && first+=("$JAVA_HOME")
  if java_bin=$(command -v java); then
    java_bin=$(resolve_path "$java_bin")
    first+=("${java_bin%/bin/java}")
  fi
  for home in ${first[@]+"${first[@]}"}; do
    [[ -x $home/bin/java && -x $home/bin/javac ]] || continue
    ver=$(java_version "$home") || continue
    major=$(java_major "$ver")
    seen+=("$home ($ver)")
    if ((major >= RLM_MIN_JAVA)); then
      printf '%s\n' "$home"
      return 0
    fi
  done

  # 3: the newest JDK in the well-known install directories.
  for home in /usr/lib/jvm/* /opt/java/* /Library/Java/JavaVirtualMachines/*/Contents/Home; do
    [[ -x $home/bin/java && -x $home/bin/javac ]] || continue
    [[ -L $home ]] && home=$(resolve_path "$home")
    [[ " ${seen[*]-} " == *" $home ("* ]] && continue
    ver=$(java_version "$home") || continue
    major=$(java_major "$ver")
    seen+=("$home ($ver)")
    if ((major >= RLM_MIN_JAVA && major > best_major)); then
      best=$home
      best_major=$major
    fi
  done
  if [[ -n $best ]]; then
    printf '%s\n' "$best"
    return 0
  fi

  local found=none
  if ((${#seen[@]})); then
    found=$(printf '%s, ' "${seen[@]}")
    found=${found%, }
  fi
  echo "rlm-mcp needs a JDK $RLM_MIN_JAVA or newer; found: $found;" \
    "install one (e.g. Temurin $RLM_MIN_JAVA+) or set JAVA_HOME" >&2
  return 1
}

# pyenv_selection: print which version pyenv would pick here, the way pyenv does
# ($PYENV_VERSION, else the nearest .python-version upwards, else the global version file),
# without running pyenv (its shims are slow).
pyenv_selection() {
  local dir=$PWD line
  if [[ -n ${PYENV_VERSION:-} ]]; then
    printf 'env:%s\n' "$PYENV_VERSION"
    return
  fi
  while :; do
    if [[ -f $dir/.python-version ]]; then
      line=$(<"$dir/.python-version") || line=
      printf 'local:%s\n' "$line"
      return
    fi
    [[ -z $dir || $dir == / ]] && break
    dir=${dir%/*}
  done
  line=
  IFS= read -r line <"${PYENV_ROOT:-$HOME/.pyenv}/version" 2>/dev/null || true # no process: this is on every start
  printf 'global:%s\n' "$line"
}

# find_python: print the real executable of a Python >= 3.10 ($RLM_PYTHON, else python3).
# Resolving it through sys.executable also skips wrappers such as pyenv shims.
find_python() {
  local cmd=${RLM_PYTHON:-python3} out
  local check='import sys; print(sys.version_info >= (3, 10), "%d.%d.%d" % sys.version_info[:3], sys.executable)'
  if ! command -v "$cmd" >/dev/null; then
    echo "rlm-mcp needs Python $RLM_MIN_PYTHON or newer; '$cmd' was not found;" \
      "install python3 or set RLM_PYTHON to a Python $RLM_MIN_PYTHON+ interpreter" >&2
    return 1
  fi
  out=$("$cmd" -I -c "$check" 2>/dev/null </dev/null) || out=
  local ok=${out%% *} rest=${out#* }
  local ver=${rest%% *} exe=${rest#* }
  if [[ $ok != True ]]; then
    echo "rlm-mcp needs Python $RLM_MIN_PYTHON or newer; '$cmd' is ${ver:-not a working Python};" \
      "install a newer python3 or set RLM_PYTHON to a Python $RLM_MIN_PYTHON+ interpreter" >&2
    return 1
  fi
  [[ -n $exe ]] || exe=$(command -v "$cmd")
  printf '%s\n' "$exe"
}
