# Sourced by ./kosa8 and ./run-tests: picks a Java 25 JDK into JAVA_HOME and
# makes sure the host packages kosa8 needs are installed (as root it installs
# them; otherwise it prints the exact apt-get line and stops).
# The program list is kept in step with dev.kosa8.host.HostTools.

say() { printf 'kosa8: %s\n' "$*" >&2; }

# The major version of a JDK home: read from its `release` file (no JVM start), else by asking java.
jdk_major() {
  local v
  if [[ -f "$1/release" ]]; then
    v=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$1/release")
    [[ -n "$v" ]] && { echo "$v"; return; }
  fi
  "$1/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p'
}

find_java25() {
  local c
  for c in "${KOSA8_JAVA_HOME:-}" "${JAVA_HOME:-}" /usr/lib/jvm/temurin-25-jdk-* /usr/lib/jvm/java-25-* /usr/lib/jvm/*-25-*; do
    [[ -n "$c" && -x "$c/bin/java" ]] || continue
    if [[ "$(jdk_major "$c")" -ge 25 ]] 2>/dev/null; then echo "$c"; return 0; fi
  done
  if command -v java >/dev/null; then
    c=$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")
    if [[ "$(jdk_major "$c")" -ge 25 ]] 2>/dev/null; then echo "$c"; return 0; fi
  fi
  return 1
}

select_java25() {
  if ! JAVA_HOME=$(find_java25); then
    say "kosa8 needs a Java 25 JDK and found none (checked \$KOSA8_JAVA_HOME, \$JAVA_HOME, /usr/lib/jvm, PATH)."
    say "install one, e.g. on Debian/Ubuntu from the Adoptium repository: sudo apt-get install temurin-25-jdk"
    say "or point KOSA8_JAVA_HOME at an unpacked JDK 25."
    exit 4
  fi
  export JAVA_HOME
  export PATH="$JAVA_HOME/bin:$PATH"
}

ensure_host_packages() {
  ensure_programs qemu-system-x86_64=qemu-system-x86 qemu-img=qemu-utils mke2fs=e2fsprogs mmdebstrap=mmdebstrap \
    dpkg-deb=dpkg setsid=util-linux socat=socat bwrap=bubblewrap mvn=maven make=make gcc-12=gcc-12 strip=binutils
}

# What only the tests need: a headless Secret Service (D-Bus, GNOME Keyring, secret-tool) for the secret store's
# keyring test (users never need these; kosa8 falls back to a 0600 file where there is no keyring); zstd and setcap
# for the image tests' zstd layers and file capabilities (kosa8 itself reads zstd in Java and writes xattrs with
# debugfs); Go (golang-go) to build the Go client GuestClientsIT runs in a guest; XFS's tools (xfsprogs) for the
# clone tests, which mount a small XFS with reflinks on a loop device (checkpoint.ReflinkVolume); Debian's cross
# compiler for the other architecture, against whose headers LinuxAbiTest checks its system-call numbers; Debian's
# pip wheel, which PackageManagersIT runs in a guest (no PyPI here, and apt in the guest would add a minute).
ensure_test_packages() {
  ensure_programs dbus-run-session=dbus gnome-keyring-daemon=gnome-keyring secret-tool=libsecret-tools \
    docker-registry=docker-registry skopeo=skopeo htpasswd=apache2-utils gcc=gcc musl-gcc=musl-tools node=nodejs \
    npm=npm zstd=zstd setcap=libcap2-bin go=golang-go mkfs.xfs=xfsprogs
  ensure_files '/usr/share/python-wheels/pip-*.whl=python3-pip-whl'
  # the other architecture's compiler, and its C library's and kernel's headers, which the compiler only
  # recommends (so --no-install-recommends leaves them out); the host's own gcc is its own architecture's
  case "$(uname -m)" in
    x86_64) ensure_programs aarch64-linux-gnu-gcc=gcc-aarch64-linux-gnu
            ensure_files /usr/aarch64-linux-gnu/include/fcntl.h=libc6-dev-arm64-cross \
              /usr/aarch64-linux-gnu/include/asm/fcntl.h=linux-libc-dev-arm64-cross ;;
    aarch64) ensure_programs x86_64-linux-gnu-gcc=gcc-x86-64-linux-gnu
             ensure_files /usr/x86_64-linux-gnu/include/fcntl.h=libc6-dev-amd64-cross \
               /usr/x86_64-linux-gnu/include/asm/fcntl.h=linux-libc-dev-amd64-cross ;;
  esac
}

# ensure_programs PROGRAM=PACKAGE...: installs the Debian packages of the programs that are missing (as root),
# else names the command that would.
ensure_programs() {
  local missing=() pair
  for pair in "$@"; do
    PATH="$PATH:/usr/sbin:/sbin" command -v "${pair%%=*}" >/dev/null 2>&1 || missing+=("${pair#*=}")
  done
  install_packages "${missing[@]}"
}

# ensure_files FILE=PACKAGE...: the same for packages that hold files rather than programs (headers); FILE may be
# a glob.
ensure_files() {
  local missing=() pair
  for pair in "$@"; do
    compgen -G "${pair%%=*}" >/dev/null || missing+=("${pair#*=}")
  done
  install_packages "${missing[@]}"
}

install_packages() {
  local missing=("$@")
  (( ${#missing[@]} )) || return 0
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    say "installing host packages: ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
  else
    say "missing host packages: ${missing[*]}"
    say "install them with: sudo apt-get install -y --no-install-recommends ${missing[*]}"
    exit 4
  fi
}
