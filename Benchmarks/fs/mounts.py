"""FUSE daemons for the benchmarks: notesfs and libfuse's passthrough_ll, run in the foreground so
that their pid (CPU time, VmRSS, VmHWM) is known, mounted and unmounted from Python.
"""
import os
import shutil
import subprocess
import time


def mounted(path):
    return os.stat(path).st_dev != os.stat(os.path.dirname(os.path.abspath(path))).st_dev


class Daemon:
    """One FUSE daemon process serving MNT. `mount()` returns the seconds from exec to serving."""

    def __init__(self, argv, mnt, log):
        self.argv, self.mnt, self.log, self.proc = argv, mnt, log, None

    def mount(self):
        os.makedirs(self.mnt, exist_ok=True)
        start = time.perf_counter()
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(self.argv, stdout=log, stderr=log)
        while not mounted(self.mnt):
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.argv[0]} exited with {self.proc.returncode} (log: {self.log})")
            if time.perf_counter() - start > 120:
                raise RuntimeError(f"{self.mnt} did not appear within 120 s")
            time.sleep(0.001)
        return time.perf_counter() - start

    def unmount(self):
        subprocess.run(["fusermount3", "-u", self.mnt], check=True)
        self.proc.wait()

    @property
    def pid(self):
        return self.proc.pid

    def status_mb(self, key):
        """A /proc/PID/status figure in MB (VmRSS: now, VmHWM: peak)."""
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) / 1024
        return 0.0

    def cpu_seconds(self):
        """User + system CPU time of the whole process (every thread, live or ended)."""
        with open(f"/proc/{self.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def notesfs(binary, db, mnt, log):
    """notesfs serving database DB (opened before the mount: mount() includes the open)."""
    os.makedirs(db, exist_ok=True)
    return Daemon([binary, db, mnt, "-f"], mnt, log)


def passthrough_ll(binary, source, mnt, log):
    """passthrough_ll over SOURCE with -o xattr,default_permissions, the fair peer of issue 33:
    - xattr: it serves xattrs as notesfs does (ls -l asks for two per file); without it
      passthrough_ll answers ENOSYS once and the kernel stops asking.
    - default_permissions: the kernel checks permissions itself, as on every notesfs mount, and so
      asks for a directory's attributes again after each change in it (an unlink's GETATTR of its
      folder); without it passthrough_ll is spared those round trips."""
    os.makedirs(source, exist_ok=True)
    return Daemon([binary, "-f", "-o", f"source={source},xattr,default_permissions", mnt], mnt, log)


def fresh(path):
    """PATH, made empty."""
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def daemon_for(fs, notesfs_bin, pt_bin, work, shm):
    """A daemon of FS ("passthrough_ll" or "notesfs") at WORK/mnt-FS, logging to WORK/FS.log, over an
    empty source (SHM/src) or database (SHM/db); not mounted yet."""
    mnt, log = os.path.join(work, "mnt-" + fs), os.path.join(work, fs + ".log")
    if fs == "passthrough_ll":
        return passthrough_ll(pt_bin, fresh(os.path.join(shm, "src")), mnt, log)
    return notesfs(notesfs_bin, fresh(os.path.join(shm, "db")), mnt, log)
