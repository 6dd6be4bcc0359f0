"""No Unix socket for a confined command without the network: a seccomp filter for bubblewrap.

`--unshare-net` takes the command off every network, abstract Unix sockets included, but a Unix
socket bound to a path is reached through the file system: a service listening in a home or
project folder (a database, a container engine, an editor's or an agent's own) would act for
the command outside the root. seccomp cannot read the path a `connect` names (it sees only the
pointer), so the filter refuses what every such connection needs first: `socket(AF_UNIX, …)`,
with EACCES ("permission to create a socket of this type is denied"). `socketpair` stays
allowed (a connected pair between the command's own processes reaches nothing else), and so
does every other family (with the network off only the sandbox's own loopback is there). Unix
sockets inside the root are refused too: a command that needs one of its own (a test's Unix
server; Python 3.14's `forkserver`) runs with the network allowed. `io_uring_setup` is refused
with ENOSYS, as on a kernel without io_uring, since a ring makes sockets without the syscall.
A system call of another ABI (32-bit x86 or x32 on x86_64) ends the process: its numbers differ.

The program is classic BPF assembled here, a dozen instructions: libseccomp's Python binding
is Debian's, for the system Python only, and the PyPI shim over it is unmaintained since 2021,
while the core imports only the standard library. Where the machine is none of those below, no
filter is made, and the receipt says Unix sockets were not denied.
"""

from __future__ import annotations

import os
import platform
import socket
import struct
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

# linux/filter.h, linux/seccomp.h
LOAD_WORD = 0x20  # BPF_LD | BPF_W | BPF_ABS
JUMP_EQUAL = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
JUMP_AT_LEAST = 0x35  # BPF_JMP | BPF_JGE | BPF_K
RETURN = 0x06  # BPF_RET | BPF_K
KILL_PROCESS = 0x80000000
ERRNO = 0x00050000
ALLOW = 0x7FFF0000
NUMBER_AT, ARCH_AT, FIRST_ARGUMENT_AT = 0, 4, 16  # struct seccomp_data
X32_BIT = 0x40000000
IO_URING_SETUP = 425  # one number on every architecture


@dataclass(frozen=True)
class Architecture:
    audit: int  # AUDIT_ARCH_*
    socket: int  # the socket(2) system call's number
    x32: bool = False  # x86_64, whose numbers with X32_BIT set are another ABI's


ARCHITECTURES = {
    "x86_64": Architecture(0xC000003E, 41, x32=True),
    "aarch64": Architecture(0xC00000B7, 198),
    "riscv64": Architecture(0xC00000F3, 198),
}


def _instruction(code: int, k: int, true: int = 0, false: int = 0) -> bytes:
    return struct.pack("=HBBI", code, true, false, k)


def program(machine: str | None = None) -> bytes | None:
    """The filter as bubblewrap's `--seccomp` reads it (struct sock_filter, in order), for
    `machine` (this one by default); None where this module knows no numbers for it."""
    if sys.byteorder != "little" or not sys.platform.startswith("linux"):
        return None
    arch = ARCHITECTURES.get(machine or platform.machine())
    if arch is None:
        return None
    deny_socket = ERRNO | 13  # EACCES
    no_io_uring = ERRNO | 38  # ENOSYS
    code = [
        _instruction(LOAD_WORD, ARCH_AT),
        _instruction(JUMP_EQUAL, arch.audit, true=1),
        _instruction(RETURN, KILL_PROCESS),
        _instruction(LOAD_WORD, NUMBER_AT),
    ]
    if arch.x32:
        code += [_instruction(JUMP_AT_LEAST, X32_BIT, false=1), _instruction(RETURN, KILL_PROCESS)]
    code += [
        _instruction(JUMP_EQUAL, IO_URING_SETUP, false=1),
        _instruction(RETURN, no_io_uring),
        _instruction(JUMP_EQUAL, arch.socket, false=3),
        _instruction(LOAD_WORD, FIRST_ARGUMENT_AT),  # the family: an int, the low word
        _instruction(JUMP_EQUAL, socket.AF_UNIX, false=1),
        _instruction(RETURN, deny_socket),
        _instruction(RETURN, ALLOW),
    ]
    return b"".join(code)


FILTER_FD = 3  # where `TRAMPOLINE` puts the program for bwrap's `--seccomp`

# For a launcher that passes no descriptor (the MCP SDK's): `python -I -S -c TRAMPOLINE HEX
# BWRAP…` writes the program (hex) to a pipe, moves its reading end to FILTER_FD, execs bwrap.
TRAMPOLINE = """import os, sys
read, write = os.pipe()
os.write(write, bytes.fromhex(sys.argv[1]))
os.close(write)
if read != 3:
    os.dup2(read, 3)
    os.close(read)
else:
    os.set_inheritable(3, True)
os.execv(sys.argv[2], sys.argv[2:])
"""


@contextmanager
def readable(data: bytes) -> Iterator[int]:
    """A descriptor to read `data` from to its end (a pipe, closed after), for a child to
    inherit: bubblewrap reads its `--seccomp` program so."""
    read, write = os.pipe()
    try:
        os.write(write, data)  # far below a pipe's buffer: a program is a few hundred bytes
    finally:
        os.close(write)
    try:
        yield read
    finally:
        os.close(read)
