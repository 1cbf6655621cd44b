#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Sample where a TCG guest's vCPUs spend their time, through QEMU's gdbstub.

    profile.py SOCKET RESULT_LOG SYSTEM_MAP MODULE_KO [--after REGEX]
               [--until REGEX] [--seconds N] [--windows N] [--interval MS]
               [--top N] [--callers REGEX]

perf has no PMU to sample under TCG, so this stops the whole VM every
--interval ms over QEMU's gdb remote protocol, reads every vCPU's
instruction pointer and lets it run again.  A TCG vCPU only stops between
translated blocks, so a sample is exact to the block, which is precise
enough to rank functions.  Samples are taken from the first RESULT_LOG line
matching --after until --until matches or --seconds pass (with --windows N,
the next N - 1 such windows too, the VM running unsampled in between: a
phase too short to sample once is sampled over its repeats), then
symbolised against the kernel's System.map (boot with nokaslr) and the
module's .text, whose load address the VM init records as "qtimer-vm:
module text ADDR".
Idle vCPUs (the halt loop) are counted apart; user space is one bucket.
--callers REGEX also reads the top of the kernel stack at each kernel
sample and, for samples in a function matching REGEX (a lock's slow path,
say), names the first return address into the module found there: which
of qtimer's calls the time behind a shared kernel function belongs to.

bench/bench.sh --profile REGEX runs it; scripts/vm/run.sh opens the gdbstub
when QTIMER_GDB names a socket.
"""

import argparse
import bisect
import collections
import os
import re
import socket
import subprocess
import sys
import time

IDLE = re.compile(r"^(default_idle|native_safe_halt|arch_cpu_idle|do_idle|"
                  r"cpuidle_idle_call|default_idle_call|pv_native_safe_halt|"
                  r"acpi_idle_.*|mwait_idle.*|cpu_startup_entry)$")
# All of user space is one bucket: the guest's user symbols are not loaded.
USER = "[user space]"


class Rsp:
    """The little of the gdb remote serial protocol that sampling needs."""

    def __init__(self, path, timeout):
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.sock.connect(path)
                break
            except OSError:
                self.sock.close()
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        self.buf = b""
        self.ack = True
        # Attaching stops the VM, and QEMU says so with a stop reply.
        self.packet()
        # Without acks a request is one round trip (QEMU 7.2 says no).
        if self.request(b"QStartNoAckMode") == b"OK":
            self.ack = False

    def send(self, data):
        csum = sum(data) & 0xFF
        self.sock.sendall(b"$" + data + b"#%02x" % csum)

    def packet(self):
        while True:
            start = self.buf.find(b"$")
            if start >= 0:
                end = self.buf.find(b"#", start)
                if end >= 0 and len(self.buf) >= end + 3:
                    data = self.buf[start + 1:end]
                    self.buf = self.buf[end + 3:]
                    if self.ack:
                        self.sock.sendall(b"+")
                    return data
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("gdbstub closed the connection")
            self.buf += chunk

    def request(self, data):
        self.send(data)
        return self.packet()

    def threads(self):
        ids = []
        reply = self.request(b"qfThreadInfo")
        while reply.startswith(b"m"):
            ids += reply[1:].split(b",")
            reply = self.request(b"qsThreadInfo")
        return ids

    def regs(self, tid):
        """(rip, rsp) of vCPU @tid, or None."""
        if self.request(b"Hg" + tid) != b"OK":
            return None
        # QEMU 7.2 answers no "p": take rip, register 16 of 8 bytes, and
        # rsp, register 7, from "g".
        reply = self.request(b"g")
        if len(reply) < 17 * 16:
            return None

        def reg(i):
            return int.from_bytes(bytes.fromhex(reply[i * 16:i * 16 + 16].decode()),
                                  "little")
        return reg(16), reg(7)

    def words(self, addr, nr):
        """@nr 8-byte words at @addr in the selected vCPU's memory."""
        reply = self.request(b"m%x,%x" % (addr, nr * 8))
        if reply.startswith(b"E") or len(reply) < nr * 16:
            return ()
        raw = bytes.fromhex(reply[:nr * 16].decode())
        return tuple(int.from_bytes(raw[i:i + 8], "little") for i in range(0, len(raw), 8))

    def cont(self):
        self.send(b"c")

    def stop(self):
        self.sock.sendall(b"\x03")
        while not self.packet().startswith((b"T", b"S")):
            pass

    def gone(self):
        """Whether QEMU closed the connection (the VM ended), without waiting."""
        try:
            return self.sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
        except BlockingIOError:
            return False
        except OSError:
            return True

    def detach(self):
        try:
            self.request(b"D")
        finally:
            self.sock.close()


class Symbols:
    def __init__(self):
        self.addrs, self.names = [], []

    def add(self, addr, name):
        self.addrs.append(addr)
        self.names.append(name)

    def done(self):
        order = sorted(range(len(self.addrs)), key=self.addrs.__getitem__)
        self.addrs = [self.addrs[i] for i in order]
        self.names = [self.names[i] for i in order]

    def lookup(self, addr):
        i = bisect.bisect_right(self.addrs, addr) - 1
        if i < 0:
            return None, 0
        return self.names[i], addr - self.addrs[i]


def load_symbols(system_map, module_ko, module_text):
    syms = Symbols()
    with open(system_map) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and parts[1] in "TtWw":
                syms.add(int(parts[0], 16), parts[2])
    if module_ko and module_text is not None:
        # Symbols of the module's .text section, at their section offsets.
        out = subprocess.run(["readelf", "-sW", module_ko], capture_output=True,
                             text=True, check=True).stdout
        shdrs = subprocess.run(["readelf", "-SW", module_ko], capture_output=True,
                               text=True, check=True).stdout
        text_ndx = None
        for m in re.finditer(r"\[\s*(\d+)\]\s+(\S+)", shdrs):
            if m.group(2) == ".text":
                text_ndx = m.group(1)
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 8 and parts[3] == "FUNC" and parts[6] == text_ndx:
                syms.add(module_text + int(parts[1], 16), "[qtimer] " + parts[7])
    syms.done()
    return syms


def follow(path, regex, deadline, pos=0, gone=lambda: False):
    """Wait until a line of @path after byte @pos matches @regex; return the
    offset just past that line, or None (also once @gone() says so)."""
    while time.monotonic() < deadline and not gone():
        try:
            with open(path, errors="replace") as f:
                f.seek(pos)
                for line in f:
                    if not line.endswith("\n"):
                        break
                    pos += len(line.encode(errors="replace"))
                    if regex.search(line):
                        return pos
        except FileNotFoundError:
            pass
        time.sleep(0.05)
    return None


def module_text(path):
    try:
        with open(path, errors="replace") as f:
            for line in f:
                m = re.match(r"qtimer-vm: module text (0x[0-9a-f]+)", line)
                if m:
                    return int(m.group(1), 16)
    except FileNotFoundError:
        pass
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("socket")
    ap.add_argument("result_log")
    ap.add_argument("system_map")
    ap.add_argument("module_ko")
    ap.add_argument("--after", default="qtimer-vm: start")
    ap.add_argument("--until", default=None)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--interval", type=float, default=5, help="ms between samples")
    ap.add_argument("--wait", type=float, default=3600, help="seconds to wait for --after")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--windows", type=int, default=1,
                    help="sample this many --after .. --until windows")
    ap.add_argument("--callers", default=None,
                    help="name the module's caller of samples in these functions")
    args = ap.parse_args()

    after = re.compile(args.after)
    until = re.compile(args.until) if args.until else None
    pos = follow(args.result_log, after, time.monotonic() + args.wait)
    if pos is None:
        print(f"profile: never saw /{args.after}/", file=sys.stderr)
        return 1
    base = module_text(args.result_log)
    rsp = Rsp(args.socket, 10)
    tids = rsp.threads()
    samples = collections.Counter()
    stacks = collections.Counter()	# (ip, the stack's top words) -> samples
    per_cpu = {tid: collections.Counter() for tid in tids}
    nr = windows = 0
    elapsed = 0.0
    try:
        while True:
            start = time.monotonic()
            while time.monotonic() - start < args.seconds:
                for tid in tids:
                    regs = rsp.regs(tid)
                    if regs is None:
                        continue
                    ip = regs[0]
                    samples[ip] += 1
                    per_cpu[tid][ip] += 1
                    if args.callers and ip >= 1 << 47:
                        stacks[(ip, rsp.words(regs[1], 32))] += 1
                nr += 1
                rsp.cont()
                time.sleep(args.interval / 1000)
                rsp.stop()
                if until:
                    with open(args.result_log, errors="replace") as f:
                        f.seek(pos)
                        tail = f.read()
                    m = until.search(tail)
                    if m:
                        pos += len(tail[:m.end()].encode(errors="replace"))
                        break
            elapsed += time.monotonic() - start
            windows += 1
            if windows >= args.windows:
                break
            # Let the guest run unsampled until the next window opens.
            rsp.cont()
            pos = follow(args.result_log, after, time.monotonic() + args.wait, pos,
                         rsp.gone)
            if pos is None:
                break
            rsp.stop()
    except (EOFError, OSError):
        pass  # the VM went away: report what was sampled
    try:
        rsp.detach()
    except OSError:
        pass

    syms = load_symbols(args.system_map, args.module_ko, base)

    def classify(ip):
        """(function, offset) of a sample: USER for user space, None if idle."""
        if ip < 1 << 47:
            return USER, 0
        name, off = syms.lookup(ip)
        name = name or hex(ip)
        return (None if IDLE.match(name) else name), off

    funcs, spots = collections.Counter(), collections.Counter()
    idle = user = 0
    for ip, n in samples.items():
        name, off = classify(ip)
        if name is None:
            idle += n
        elif name == USER:
            user += n
        else:
            funcs[name] += n
            spots[(name, off & ~0x3F)] += n
    busy = sum(funcs.values()) + user
    print(f"profile: {nr} stops over {elapsed:.1f} s in {windows} window(s), {len(tids)} vCPUs; "
          f"{busy} busy samples ({user} user), {idle} idle; module text "
          f"{hex(base) if base is not None else 'unknown'}")
    if not busy:
        return 0
    print(f"{'share':>6} {'samples':>7}  function (busy samples; user space as one)")
    rows = funcs.most_common()
    rows.append((USER, user))
    rows.sort(key=lambda r: -r[1])
    for name, n in rows[:args.top]:
        print(f"{100.0 * n / busy:5.1f}% {n:7d}  {name}")
    # Which work shares a vCPU shows whether it runs in parallel at all.
    print("\nper vCPU (busy share of its samples; its top functions):")
    for cpu, tid in enumerate(tids):
        names = collections.Counter()
        for ip, n in per_cpu[tid].items():
            names[classify(ip)[0]] += n
        total = sum(names.values())
        idle_n = names.pop(None, 0)
        top = ", ".join(f"{name} {n}" for name, n in names.most_common(5))
        print(f"  vCPU {cpu}: {100.0 * (total - idle_n) / max(total, 1):5.1f}% busy; {top}")
    print(f"\nhottest 64-byte spans (objdump the function at +offset):")
    for (name, off), n in spots.most_common(args.top // 2):
        print(f"{100.0 * n / busy:5.1f}% {n:7d}  {name}+{off:#x}")
    if args.callers:
        print_callers(re.compile(args.callers), stacks, syms, classify, busy)
    return 0


def print_callers(regex, stacks, syms, classify, busy):
    """For samples in functions matching @regex, the first module function
    whose return address stands in the stack's top words."""
    callers = collections.Counter()
    for (ip, words), n in stacks.items():
        name = classify(ip)[0]
        if not name or not regex.search(name):
            continue
        caller = "(no module address in the stack's top 256 bytes)"
        for w in words:
            cname, off = syms.lookup(w)
            if cname and cname.startswith("[qtimer] ") and off:
                caller = f"{cname}+{off:#x}"
                break
        callers[(name, caller)] += n
    print(f"\ncallers from the module of samples in /{regex.pattern}/:")
    for (name, caller), n in callers.most_common(20):
        print(f"{100.0 * n / busy:5.1f}% {n:7d}  {name} <- {caller}")


if __name__ == "__main__":
    sys.exit(main())
