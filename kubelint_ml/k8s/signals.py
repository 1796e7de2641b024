"""Multi-process signals in a container or a workload object (docs/k8s-facts.md §6).

A signal is something written in a manifest that makes a container run
several processes: a launcher that starts one process per device
(torchrun, deepspeed, accelerate launch, mpirun), DataLoader workers,
pre-forking servers, parallel build/shell tools, background shell jobs.

Decisions:

* A process count of 1 (``--nproc_per_node=1``, ``-np 1``, ``--num_processes 1``)
  is not a signal, nor is ``num_workers=0``; a launcher without an explicit
  count is a signal only where its default is "every device" (deepspeed,
  accelerate, mpirun, make -j, parallel); torchrun's default is one process.
* Counts that cannot be read are still signals, with ``processes=None``:
  ``auto``/``gpu``/``cpu``/``xpu`` (one process per device), shell or
  Kubernetes variables that do not resolve to a literal ``env`` value of the
  same container (``$(NPROC)``, ``$GPU_PER_NODE``), arithmetic.
* ``NUM_WORKERS`` alone in ``env`` is not a signal (Ray Train and MPI
  samples use it for the number of workers/machines); env names that say
  data loader (``DATALOADER_NUM_WORKERS``, ``NUM_DATA_WORKERS``...) are.
  Likewise ``--num-workers`` inside a ``ray`` command means Ray workers.
* ``--workers N`` counts as DataLoader workers only for a Python/launcher
  command (the PyTorch examples' flag), as server workers for
  gunicorn/uvicorn, and is ignored elsewhere.
* ``OMP_NUM_THREADS`` and other thread counts are never signals.
* An inference server's model-parallel degree above 1 (vLLM and SGLang
  ``--tensor-parallel-size``/``-tp``/``--tp-size`` and
  ``--pipeline-parallel-size``/``-pp``/``--pp-size``, TGI ``--num-shard``,
  or ``NUM_SHARD``/``TENSOR_PARALLEL_SIZE``/``PIPELINE_PARALLEL_SIZE`` in
  ``env``) is a ``model-parallel`` signal: one worker process per GPU, tensor x
  pipeline x the data parallel replicas on this node (vLLM ``-dpl``/``-dp``;
  SGLang ``--dp`` unless ``--enable-dp-attention``) processes, over SGLang's
  ``--nnodes``, at most the container's GPUs.  vLLM's data parallel replicas
  alone are one only with ``--enable-expert-parallel``.  On TPUs (``google.com/tpu``, or
  TPUs the container claims through DRA, which the caller says) vLLM's and SGLang's tensor and data parallel degrees are one JAX/XLA program
  in one process (vllm-project/tpu-inference ``tpu_platform.py`` forces the
  single-process executor on a host unless pipeline parallel): only the
  pipeline parallel degree starts processes there (TGI's shards still do).
* ``processes`` is the number of processes the signal starts (per node for
  launchers: accelerate's ``--num_processes`` is divided by
  ``--num_machines``); for ``mpirun -np N`` it is the total rank count,
  which may be spread over several pods.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from functools import lru_cache
from typing import Any

from kubelint_ml.input.objects import dig
from kubelint_ml.input.workloads import is_runtime_trainer_job
from kubelint_ml.lazyre import LazyPattern
from kubelint_ml.records import Frozen


class Signal(Frozen):
    text: str  # what was found, as written
    kind: str  # "torchrun" | "dataloader" | "deepspeed" | "accelerate" | "mpi" | ...
    path: tuple  # field path in the container, or from the object root
    processes: int | None  # number of processes when known
    _fields = ("text", "kind", "path", "processes")

    def __init__(self, text: str, kind: str, path: tuple, processes: int | None) -> None:
        object.__setattr__(self, "text", text)
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "processes", processes)


# --------------------------------------------------------------------------
# Shell tokens

_OPERATORS = ("&&", "||", ";;", ";", "&", "|", "(", ")", "\n")
_OP_START = frozenset(o[0] for o in _OPERATORS)


class _Tok:
    """A shell word or operator and the field it was read from (many per command: a plain class)."""

    __slots__ = ("text", "path", "op")

    def __init__(self, text: str, path: tuple, op: bool = False) -> None:
        self.text = text
        self.path = path
        self.op = op


def _shell_words(text: str) -> list[tuple[str, bool]]:
    """Split shell text into (word, is_operator); quotes are removed, unquoted
    newlines and ; & && | || ( ) are operators, # starts a comment."""
    out: list[tuple[str, bool]] = []
    word: list[str] = []
    in_word = False
    i, n = 0, len(text)
    quote = ""

    def flush() -> None:
        nonlocal word, in_word
        if in_word:
            out.append(("".join(word), False))
        word, in_word = [], False

    while i < n:
        c = text[i]
        if quote == "'":
            if c == "'":
                quote = ""
            else:
                word.append(c)
            i += 1
            continue
        if quote == '"':
            if c == '"':
                quote = ""
            elif c == "\\" and i + 1 < n and text[i + 1] in '"\\$`\n':
                if text[i + 1] != "\n":
                    word.append(text[i + 1])
                i += 1
            else:
                word.append(c)
            i += 1
            continue
        if c in "'\"":
            quote, in_word = c, True
            i += 1
            continue
        if c == "\\" and i + 1 < n:
            if text[i + 1] != "\n":  # line continuation joins lines
                word.append(text[i + 1])
                in_word = True
            i += 2
            continue
        if c == "$" and i + 1 < n and text[i + 1] in "({":
            close = ")" if text[i + 1] == "(" else "}"
            depth, j = 0, i + 1
            while j < n:
                if text[j] == text[i + 1]:
                    depth += 1
                elif text[j] == close:
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            word.append(text[i : j + 1])
            in_word = True
            i = j + 1
            continue
        if c == "#" and not in_word:
            while i < n and text[i] != "\n":
                i += 1
            continue
        if c in " \t\r":
            flush()
            i += 1
            continue
        op = next((o for o in _OPERATORS if text.startswith(o, i)), None) if c in _OP_START else None
        if op is not None:
            flush()
            out.append((op, True))
            i += len(op)
            continue
        word.append(c)
        in_word = True
        i += 1
    flush()
    return out


def _element_tokens(value: str, path: tuple) -> list[_Tok]:
    if not any(ch in value for ch in " \t\n;&|()'\"#\\"):
        return [_Tok(value, path)]
    return [_Tok(w, path, op) for w, op in _shell_words(value)]


def _segments(tokens: Sequence[_Tok]) -> Iterator[tuple[list[_Tok], str | None]]:
    """Simple commands and the operator that ends each."""
    seg: list[_Tok] = []
    for t in tokens:
        if t.op:
            yield seg, t.text
            seg = []
        else:
            seg.append(t)
    yield seg, None


# --------------------------------------------------------------------------
# Counts

_VAR = LazyPattern(r"^\$(?:\((\w+)\)|\{(\w+)\}|(\w+))$")
_DEVICE_WORDS = {"auto", "gpu", "cpu", "xpu"}


def _count(value: Any, env: Mapping[str, str], words: bool = True, depth: int = 0) -> tuple[bool, int | None]:
    """(readable-or-unknown, count).  (True, None) means "some count we cannot
    read"; (False, None) means the value is not a count at all."""
    if isinstance(value, bool):
        return False, None
    if isinstance(value, int):
        return True, value
    if not isinstance(value, str):
        return False, None
    v = value.strip()
    if re.fullmatch(r"[+-]?\d+", v):
        # a count no machine has (and past int()'s 4300-digit limit) is a count we cannot read
        return True, (int(v) if len(v) <= 18 else None)
    if words and v.lower() in _DEVICE_WORDS:
        return True, None
    m = _VAR.match(v)
    if m:
        name = m.group(1) or m.group(2) or m.group(3)
        if name in env and depth < 3:
            return _count(env[name], env, words, depth + 1)
        return True, None
    if "$" in v:
        return True, None
    return False, None


def _multi(value: Any, env: Mapping[str, str], above: int, words: bool = True) -> tuple[bool, int | None]:
    """Whether a count makes several processes (count > above, or unknown)."""
    ok, n = _count(value, env, words)
    if not ok:
        return False, None
    if n is None:
        return True, None
    return n > above, n


# --------------------------------------------------------------------------
# Detectors on one simple command

_PREFIX = {"exec", "nohup", "time", "command", "sudo", "env", "nice", "stdbuf", "builtin"}
_PYTHON = LazyPattern(r"^python(\d+(\.\d+)?)?$")
_ASSIGN = LazyPattern(r"^[A-Za-z_]\w*=")
_LOADER_FLAG = LazyPattern(r"^--(?:dataloader[_-])?num[_-]workers(?:=(.*))?$")
_LOADER_KEY = LazyPattern(r"^\+{0,2}(?:[\w-]+\.)*(?:dataloader[_.])?num_workers=(.*)$")
_WORKERS = LazyPattern(r"^--workers(?:=(.*))?$")


def _basename(word: str) -> str:
    return word.rsplit("/", 1)[-1]


_SHELLS = {"sh", "bash", "dash", "ash", "zsh", "ksh"}


def _unwrap_shell(seg: list[_Tok]) -> list[_Tok]:
    """`bash -ec SCRIPT...` -> the tokens of SCRIPT (repeatedly)."""
    while True:
        ci = _command_word(seg)
        if ci is None or _basename(seg[ci].text) not in _SHELLS:
            return seg
        i = ci + 1
        while i < len(seg):
            w = seg[i].text
            if w in ("-o", "+o"):
                i += 2
                continue
            if w.startswith("-") and not w.startswith("--") and "c" in w:
                break
            if not w.startswith(("-", "+")):
                return seg
            i += 1
        else:
            return seg
        seg = seg[i + 1 :]


def _command_word(seg: list[_Tok]) -> int | None:
    """Index of the command word, skipping assignments and prefix commands."""
    i = 0
    while i < len(seg):
        w = seg[i].text
        if _ASSIGN.match(w):
            i += 1
        elif _basename(w) in _PREFIX:
            i += 1
            while i < len(seg) and seg[i].text.startswith("-"):
                i += 1
        else:
            return i
    return None


@lru_cache(maxsize=64)
def _option_forms(names: tuple[str, ...]) -> tuple[tuple[str, str | None, bool], ...]:
    """Per name: (name, its ``name=`` prefix for a long name, whether ``-nV`` is read)."""
    return tuple((n, n + "=" if len(n) > 2 else None, len(n) == 2) for n in names)


def _option(seg: list[_Tok], start: int, names: tuple[str, ...], last: bool = False) -> tuple[str, tuple, Any] | None:
    """First `--name=V`, `--name V`, or `-nV` (short names) from start:
    (text as written, path, value). ``last``: the last one instead, as argparse keeps it, for a
    command whose every word is its own option (a server's `--tensor-parallel-size 1 ... -tp 4`:
    an operator's flags, then the user's extra args); a launcher's first is its own, later ones
    may be the script's."""
    forms = _option_forms(names)
    found = None
    for i in range(start, len(seg)):
        w = seg[i].text
        if w[:1] != "-":
            continue
        for name, prefix, short in forms:
            if w == name:
                found = (
                    (f"{w} {seg[i + 1].text}", seg[i].path, seg[i + 1].text)
                    if i + 1 < len(seg)
                    else (w, seg[i].path, None)
                )
            elif prefix is not None and w.startswith(prefix):
                found = (w, seg[i].path, w[len(prefix) :])
            elif short and w.startswith(name) and w[2:].isdigit():
                found = (w, seg[i].path, w[2:])
            else:
                continue
            if not last:
                return found
            break
    return found


class _Collector:
    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = env
        self.found: list[Signal] = []
        self.parallel = False  # the text may hold a model-parallel flag
        self.gpus: int | None = None  # the container's GPU limit, read where ``parallel``
        self.tpu = False  # the container asks for TPUs (tensor parallel is one process there)

    def add(self, text: str, kind: str, path: tuple, processes: int | None) -> None:
        self.found.append(Signal(text, kind, path, processes))

    def counted(
        self,
        hit: tuple[str, tuple, Any] | None,
        kind: str,
        above: int,
        default: tuple[str, tuple] | None,
        divide: int | None = None,
    ) -> None:
        """Add a signal for a count option; `default` is the (text, path) to
        report when the option is absent (None: absent means one process)."""
        if hit is None:
            if default is not None:
                self.add(default[0], kind, default[1], None)
            return
        text, path, value = hit
        multi, n = _multi(value, self.env, above)
        if n is not None and divide and divide > 0 and n % divide == 0:
            n //= divide
            multi = n > above
        if multi:
            self.add(text, kind, path, n)


def _python_module(seg: list[_Tok], start: int) -> str | None:
    """The module of `python [opts] -m MODULE`, looking only at interpreter options."""
    i = start
    while i < len(seg) and seg[i].text.startswith("-"):
        w = seg[i].text
        if w == "-m":
            return seg[i + 1].text if i + 1 < len(seg) else None
        if w.startswith("-m") and len(w) > 2:
            return w[2:]
        i += 2 if w in ("-W", "-X", "-c") else 1
    return None


def _jobs(seg: list[_Tok], start: int, cmd: str, c: _Collector) -> None:
    """make / GNU parallel: -j, -jN, -j N, --jobs[=N]; parallel defaults to
    one job per core, make to one job."""
    for i in range(start, len(seg)):
        w = seg[i].text
        value: str | None = None
        if w in ("-j", "--jobs") or (cmd == "parallel" and w == "-P"):
            nxt = seg[i + 1].text if i + 1 < len(seg) else None
            if nxt is not None and _count(nxt, c.env, False)[0]:
                w, value = f"{w} {nxt}", nxt
        elif w.startswith("--jobs="):
            value = w[7:]
        elif w.startswith("-j") and w[2:].isdigit():
            value = w[2:]
        else:
            continue
        if value is None:
            c.add(w, cmd, seg[i].path, None)
            return
        multi, n = _multi(value, c.env, 1, False)
        if multi:
            c.add(w, cmd, seg[i].path, n)
        return
    if cmd == "parallel":
        c.add(seg[start - 1].text, cmd, seg[start - 1].path, None)


def _scan_segment(seg: list[_Tok], ci: int, c: _Collector) -> None:
    """Signals of one simple command (already unwrapped from ``sh -c``); ``ci``: its command word."""
    cmd = _basename(seg[ci].text)
    rest = ci + 1
    if cmd.startswith("-"):  # options without a command (e.g. an env value)
        cmd, rest = "", ci
    launcher = None
    head = (seg[ci].text, seg[ci].path)
    if _PYTHON.match(cmd):
        module = _python_module(seg, rest)
        if module in ("torch.distributed.run", "torch.distributed.launch"):
            launcher = "torchrun"
        elif module == "accelerate.commands.launch":
            launcher = "accelerate"
        elif module in ("deepspeed.launcher.runner", "deepspeed"):
            launcher = "deepspeed"
        if module:
            head = (f"{seg[ci].text} -m {module}", seg[ci].path)
    elif cmd == "torchrun":
        launcher = "torchrun"
    elif cmd == "deepspeed":
        launcher = "deepspeed"
    elif cmd == "accelerate" and rest < len(seg) and seg[rest].text == "launch":
        launcher = "accelerate"
        head = ("accelerate launch", seg[ci].path)

    if launcher == "deepspeed":
        c.counted(_option(seg, rest, ("--num_gpus", "--num-gpus")), "deepspeed", 1, head)
    elif launcher == "accelerate":
        machines = _option(seg, rest, ("--num_machines", "--num-machines"))
        ok, m = _count(machines[2], c.env, False) if machines else (False, None)
        c.counted(_option(seg, rest, ("--num_processes", "--num-processes")), "accelerate", 1, head, m if ok else None)
    elif cmd in ("mpirun", "mpiexec", "mpiexec.hydra", "orterun", "horovodrun"):
        c.counted(_option(seg, rest, ("-np", "--np", "-n", "-c")), "mpi", 1, head)
    elif cmd == "ray":
        if rest < len(seg) and seg[rest].text == "start":
            c.add("ray start", "ray", seg[ci].path, None)
        return  # Ray's --num-workers means Ray workers, not DataLoader ones
    elif cmd in ("gunicorn", "uvicorn"):
        names = ("-w", "--workers") if cmd == "gunicorn" else ("--workers",)
        c.counted(_option(seg, rest, names), "server", 1, None)
        return
    elif cmd in ("make", "parallel"):
        _jobs(seg, rest, cmd, c)
        return
    elif cmd == "xargs":
        hit = _option(seg, rest, ("-P", "--max-procs"))
        if hit is not None:
            ok, n = _count(hit[2], c.env, False)
            if ok and (n is None or n == 0 or n > 1):
                c.add(hit[0], "xargs", hit[1], n if n else None)
        return
    elif cmd in ("supervisord",):
        c.add(seg[ci].text, "supervisor", seg[ci].path, None)
        return

    # torchrun's count; also honoured in any command (a launcher in a variable).
    c.counted(_option(seg, rest, ("--nproc_per_node", "--nproc-per-node")), "torchrun", 1, None)
    _model_parallel(seg, rest, c)
    python_like = launcher is not None or _PYTHON.match(cmd) is not None
    for i in range(rest, len(seg)):
        w = seg[i].text
        flag = _LOADER_FLAG.match(w) or (_WORKERS.match(w) if python_like else None)
        if flag:
            if flag.group(1) is not None:
                text, value = w, flag.group(1)
            elif i + 1 < len(seg):
                text, value = f"{w} {seg[i + 1].text}", seg[i + 1].text
            else:
                continue
            multi, n = _multi(value, c.env, 0, False)
            if multi:
                c.add(text, "dataloader", seg[i].path, n)
            continue
        k = _LOADER_KEY.match(w)
        if k and not w.startswith("-"):
            multi, n = _multi(k.group(1), c.env, 0, False)
            if multi:
                c.add(w, "dataloader", seg[i].path, n)


# Inference servers that start one worker process per GPU of a model-parallel group, exchanging
# activations through NCCL (whose intra-node transport is /dev/shm): vLLM's and SGLang's tensor and
# pipeline parallel sizes (vllm/engine/arg_utils.py: -tp, -pp; sglang/srt/server_args.py: --tp-size,
# --tp, --pp-size), text-generation-inference's shards (launcher: --num-shard, env NUM_SHARD).
_TP_FLAGS = (
    "--tensor-parallel-size",
    "--tensor_parallel_size",
    "-tp",
    "--tp-size",
    "--tp_size",
    "--tp",
    "--num-shard",
    "--num_shard",
)
_SHARD_FLAGS = frozenset(("--num-shard", "--num_shard"))  # TGI's: one process per shard on any device
_PP_FLAGS = ("--pipeline-parallel-size", "--pipeline_parallel_size", "-pp", "--pp-size", "--pp_size", "--pp")
# The same sizes as env variables (TGI reads NUM_SHARD; serving charts pass the others to the server;
# NVIDIA NIM for LLMs reads NIM_TENSOR_PARALLEL_SIZE and NIM_PIPELINE_PARALLEL_SIZE, which the NIM
# Operator sets for a multi-node NIMService: api/apps/v1alpha1/nimservice_types.go).
_TP_ENV = {"NUM_SHARD", "TENSOR_PARALLEL_SIZE", "TP_SIZE", "VLLM_TENSOR_PARALLEL_SIZE", "NIM_TENSOR_PARALLEL_SIZE"}
_PP_ENV = {"PIPELINE_PARALLEL_SIZE", "PP_SIZE", "VLLM_PIPELINE_PARALLEL_SIZE", "NIM_PIPELINE_PARALLEL_SIZE"}


# Data parallel replicas of a model-parallel group, each its own set of workers on this node
# (vllm/engine/arg_utils.py: --data-parallel-size/-dp, and --data-parallel-size-local/-dpl, the
# replicas on this node; sglang/srt/managers/data_parallel_controller.py launches dp_size groups of
# tp_size x pp_size schedulers, except with --enable-dp-attention, where the dp ranks share the
# tensor parallel group); SGLang's --nnodes spreads the ranks over that many nodes.
_DP_FLAGS = ("--data-parallel-size", "--data_parallel_size", "-dp", "--dp-size", "--dp_size", "--dp")
_DP_LOCAL_FLAGS = ("--data-parallel-size-local", "--data_parallel_size_local", "-dpl")
_NNODES_FLAGS = ("--nnodes",)
# vLLM's expert parallelism (arg_utils.py: --enable-expert-parallel/-ep): the experts are spread
# over the tensor x data parallel ranks, which exchange tokens all-to-all.
_EP_FLAGS = frozenset(("--enable-expert-parallel", "--enable_expert_parallel", "-ep"))


def _model_parallel(seg: list[_Tok], start: int, c: _Collector) -> None:
    """A model-parallel degree above 1: processes on this node = tensor x pipeline x the data
    parallel replicas here, over the nodes (where all are known).  Data parallel replicas alone
    are a signal only with vLLM's expert parallelism, whose all-to-all runs between them."""
    if not c.parallel:
        return
    words = {t.text for t in seg[start:]}
    dp = None
    if "--enable-dp-attention" not in words and not c.tpu:
        dp = _option(seg, start, _DP_LOCAL_FLAGS, True) or _option(seg, start, _DP_FLAGS, True)
    expert = not words.isdisjoint(_EP_FLAGS)
    tp = _option(seg, start, _TP_FLAGS, True)
    if c.tpu and tp is not None and tp[0].split("=")[0].split()[0] not in _SHARD_FLAGS:
        tp = None  # one JAX/XLA program shards the model over the host's TPU chips
    hits = (tp, _option(seg, start, _PP_FLAGS, True), dp)
    sizes = [(hit, _multi(hit[2], c.env, 1)) for hit in hits if hit is not None]
    multi = [hit for hit, (m, _) in sizes if m and (hit is not dp or expert)]
    if not multi:
        return
    lead = multi[0]
    counts = [n for _, (_, n) in sizes]
    # the options the count is made of, as written (the first that makes several processes leads)
    texts = [hit[0] for hit, (_, n) in sizes if hit is not lead and n != 1]
    if lead is dp:
        texts.append(next(t.text for t in seg[start:] if t.text in _EP_FLAGS))
    processes = None if any(n is None for n in counts) else _product(counts)
    nnodes = _option(seg, start, _NNODES_FLAGS, True)
    if nnodes is not None:
        n = _count(nnodes[2], c.env, False)[1]
        if n != 1:
            texts.append(nnodes[0])
            if processes is not None:
                processes = processes // n if n and n > 0 and processes % n == 0 else None
    if c.gpus is not None and (processes is None and nnodes is not None or (processes or 0) > c.gpus):
        # one worker per GPU: the ranks beyond this container's GPUs run in the other pods of the
        # group (SGLang's --nnodes, vLLM's Ray workers on LeaderWorkerSet)
        processes = c.gpus
        if processes <= 1:
            return
    c.add(" ".join([lead[0], *texts]), "model-parallel", lead[1], processes)


def _gpu_limit(container: Mapping[str, Any]) -> int | None:
    """The container's whole GPU limit (``<vendor>/gpu``), where it writes one as a number."""
    limits = dig(container, "resources", "limits")
    if not isinstance(limits, dict):
        return None
    total = None
    for name, value in limits.items():
        if isinstance(name, str) and name.endswith("/gpu"):
            ok, n = _count(value, {}, False)
            if not ok or n is None:
                return None
            total = (total or 0) + n
    return total


def _asks_tpu(container: Mapping[str, Any]) -> bool:
    """The container requests or limits Cloud TPU chips (``google.com/tpu``)."""
    resources = container.get("resources")
    if not isinstance(resources, dict):
        return False
    return any(isinstance(part, dict) and "google.com/tpu" in part for part in resources.values())


def _product(values: list[int | None]) -> int:
    out = 1
    for v in values:
        out *= v or 1
    return out


_TRIVIAL = {
    "wait",
    "sleep",
    "true",
    ":",
    "echo",
    "printf",
    "trap",
    "exit",
    "tail",
    "cat",
    "set",
    "cd",
    "export",
    "read",
}


def _scan_tokens(tokens: list[_Tok], c: _Collector) -> None:
    background: list[_Tok] = []
    after_background = False
    for seg, end in _segments(tokens):
        seg = _unwrap_shell(seg)
        ci = _command_word(seg)
        if ci is None:
            continue
        _scan_segment(seg, ci, c)
        if _basename(seg[ci].text) in _TRIVIAL:
            continue
        if end == "&":
            background.append(seg[ci])
        elif background:
            after_background = True
    # `job & wait` is one job; two jobs at once (or one plus a foreground
    # command) are several processes.
    if len(background) >= 2 or (background and after_background):
        first = background[0]
        c.add(f"{first.text} &", "shell", first.path, None)


# Python source inlined in args (python -c, heredocs).
_CODE_PATTERNS = (
    (LazyPattern(r"(?<![\w.\-])num_workers\s*=\s*(\d+)"), "dataloader"),
    (LazyPattern(r"(?<![\w.\-])n_jobs\s*=\s*(-?\d+)"), "multiprocessing"),
    (
        LazyPattern(
            r"\b(?:multiprocessing|mp)\.(?:Pool|Process|get_context)\s*\("
            r"|\bProcessPoolExecutor\s*\("
            r"|\btorch\.multiprocessing\.spawn\s*\(|\bmp\.spawn\s*\("
        ),
        "multiprocessing",
    ),
)


def _scan_code(text: str, path: tuple, c: _Collector) -> None:
    if "\n" not in text and "(" not in text:
        return
    for pattern, kind in _CODE_PATTERNS:
        for m in pattern.finditer(text):
            n: int | None = None
            if m.groups():
                n = int(m.group(1))
                if kind == "dataloader" and n <= 0:
                    continue
                if kind == "multiprocessing":
                    if n in (0, 1):
                        continue
                    n = None if n < 0 else n
            c.add(m.group(0), kind, path, n)


# --------------------------------------------------------------------------
# Public API

_LOADER_ENV = LazyPattern(r"(?:DATA_?LOADER|LOADER).*WORKERS|(?:NUM_)?DATA_WORKERS$", re.IGNORECASE)
_NPROC_ENV = {"PET_NPROC_PER_NODE"}  # torchrun reads it as --nproc-per-node


def _literal_env(container: Mapping[str, Any]) -> dict[str, str]:
    env = container.get("env")
    out: dict[str, str] = {}
    if isinstance(env, list):
        for e in env:
            if isinstance(e, dict) and isinstance(e.get("name"), str) and isinstance(e.get("value"), str):
                out[e["name"]] = e["value"]
    return out


_FIELD_RANK = {"command": 0, "args": 1, "env": 2}


def _dedupe(found: list[Signal]) -> list[Signal]:
    """One signal per (kind, text, path), in field order (stable)."""
    seen: set[tuple] = set()
    out = []
    ordered = sorted(
        found,
        key=lambda s: (
            _FIELD_RANK.get(s.path[0], 3) if s.path else 3,
            s.path[1] if len(s.path) > 1 and isinstance(s.path[1], int) else -1,
        ),
    )
    for s in ordered:
        key = (s.kind, s.text, s.path)
        if key not in seen:
            seen.add(key)
            out.append(s)
    return out


# Every detector above needs one of these words in the shell text (after the
# shell's quote removal and line joining, which only ever join characters):
# launcher and tool names, count flags, worker keys, Python multiprocessing
# calls, and the background operator. Text without any of them has no signal,
# and the tokenizer is not run on it. Matched against the lower-cased text
# (an IGNORECASE alternation is several times slower).
MAY_SIGNAL = re.compile(
    r"torch|deepspeed|accelerate|mpirun|mpiexec|orterun|horovodrun|ray|gunicorn|uvicorn|make|parallel|xargs"
    r"|supervisord|nproc|workers|n_jobs|multiprocessing|mp\.|processpool|spawn|&|-tp|-pp|num[_-]shard|tp[_-]size|pp[_-]size"
)


def _signal_text(container: Mapping[str, Any]) -> str:
    parts: list[str] = []
    for key in ("command", "args"):
        value = container.get(key)
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, list):
            parts.extend(v for v in value if isinstance(v, str))
    env = container.get("env")
    if isinstance(env, list):
        parts.extend(e["value"] for e in env if isinstance(e, dict) and isinstance(e.get("value"), str))
    text = "\n".join(parts)
    if "\\" in text or "'" in text or '"' in text:
        text = text.replace("\\\n", "").replace("\\", "").replace("'", "").replace('"', "")
    return text.lower()


# What a model-parallel flag needs in the text (see _model_parallel).
_PARALLEL_HINTS = ("parallel", "num-shard", "num_shard", "-tp", "-pp", "tp_size", "tp-size", "pp_size", "pp-size")


def container_signals(container: Mapping[str, Any], tpu: bool = False) -> list[Signal]:
    """Signals in a container's command, args and env values, in field order. ``tpu``: the container
    holds TPUs its resources do not name (claimed through DRA)."""
    if not isinstance(container, dict):
        return []
    env = _literal_env(container)
    c = _Collector(env)
    c.tpu = tpu or _asks_tpu(container)
    text = _signal_text(container)
    if MAY_SIGNAL.search(text) is None:
        _env_signals(container, env, c, scan_values=False)
        return _dedupe(c.found)
    c.parallel = any(hint in text for hint in _PARALLEL_HINTS)
    if c.parallel:
        c.gpus = _gpu_limit(container)
    tokens: list[_Tok] = []
    texts: list[tuple[str, tuple]] = []
    for key in ("command", "args"):
        value = container.get(key)
        if isinstance(value, str):
            tokens.extend(_element_tokens(value, (key,)))
            texts.append((value, (key,)))
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, str):
                    tokens.extend(_element_tokens(item, (key, i)))
                    texts.append((item, (key, i)))
                elif isinstance(item, int) and not isinstance(item, bool):
                    tokens.append(_Tok(str(item), (key, i)))
    _scan_tokens(tokens, c)
    for text, path in texts:
        _scan_code(text, path, c)
    _env_signals(container, env, c, scan_values=True)
    return _dedupe(c.found)


def _env_signals(container: Mapping[str, Any], env: Mapping[str, str], c: _Collector, scan_values: bool) -> None:
    """Process counts named by env variables, and (``scan_values``) commands in env values."""
    raw_env = container.get("env")
    if isinstance(raw_env, list):
        for i, e in enumerate(raw_env):
            if not isinstance(e, dict):
                continue
            name, value = e.get("name"), e.get("value")
            if not isinstance(name, str) or not isinstance(value, str):
                continue
            path = ("env", i, "value")
            if name in _NPROC_ENV:
                multi, n = _multi(value, env, 1)
                if multi:
                    c.add(f"{name}={value}", "torchrun", path, n)
            elif name in _TP_ENV or name in _PP_ENV:
                multi, n = _multi(value, env, 1)
                if multi and not (c.tpu and name in _TP_ENV and name != "NUM_SHARD"):
                    gpus = _gpu_limit(container)
                    if gpus is not None and n is not None and n > gpus:
                        # one worker per GPU: the ranks beyond this container's GPUs run in the other
                        # pods of the group (a multi-node NIM's pipeline stages, one per node)
                        n = gpus
                        if n <= 1:
                            continue
                    c.add(f"{name}={value}", "model-parallel", path, n)
            elif _LOADER_ENV.search(name):
                multi, n = _multi(value, env, 0, False)
                if multi:
                    c.add(f"{name}={value}", "dataloader", path, n)
            elif scan_values and any(ch in value for ch in " -"):
                _scan_tokens(_element_tokens(value, path), c)


def _scoped(obj: Mapping[str, Any]) -> list[tuple[Signal, list[tuple]]]:
    """Workload signals with the path prefixes of the pod templates they apply to."""
    kind = obj.get("kind")
    out: list[tuple[Signal, list[tuple]]] = []

    def count(path: tuple, sig_kind: str, label: str, scope: list[tuple]) -> None:
        value = dig(obj, *path)
        multi, n = _multi(value, {}, 1)
        if multi:
            out.append((Signal(f"{label}: {value}", sig_kind, path, n), scope))

    if kind == "PyTorchJob":
        scope: list[tuple] = [("spec", "pytorchReplicaSpecs")]
        count(("spec", "nprocPerNode"), "torchrun", "nprocPerNode", scope)
        count(("spec", "elasticPolicy", "nProcPerNode"), "torchrun", "nProcPerNode", scope)
    elif kind == "MPIJob":
        scope = [("spec", "mpiReplicaSpecs", "Worker")]
        if dig(obj, "spec", "runLauncherAsWorker") is True:
            scope.append(("spec", "mpiReplicaSpecs", "Launcher"))
        count(("spec", "slotsPerWorker"), "mpi", "slotsPerWorker", scope)
    elif kind == "TrainJob":
        count(("spec", "trainer", "numProcPerNode"), "trainjob", "numProcPerNode", [()])
    elif kind in ("TrainingRuntime", "ClusterTrainingRuntime"):
        jobs = dig(obj, "spec", "template", "spec", "replicatedJobs")
        jobs = jobs if isinstance(jobs, list) else []
        base: tuple = ("spec", "template", "spec", "replicatedJobs")
        node = [base + (i,) for i, j in enumerate(jobs) if is_runtime_trainer_job(j)] or [("spec", "template")]
        launcher = [base + (i,) for i, j in enumerate(jobs) if dig(j, "name") == "launcher"]
        count(("spec", "mlPolicy", "torch", "numProcPerNode"), "torchrun", "numProcPerNode", node)
        mpi_scope = node + (launcher if dig(obj, "spec", "mlPolicy", "mpi", "runLauncherAsNode") is True else [])
        count(("spec", "mlPolicy", "mpi", "numProcPerNode"), "mpi", "numProcPerNode", mpi_scope)
    elif kind in ("RayCluster", "RayJob", "RayService", "RayCronJob"):
        root: tuple = {
            "RayCluster": ("spec",),
            "RayJob": ("spec", "rayClusterSpec"),
            "RayService": ("spec", "rayClusterConfig"),
            "RayCronJob": ("spec", "jobTemplate", "rayClusterSpec"),
        }[kind]
        spec = dig(obj, *root)
        if isinstance(spec, dict):
            if isinstance(spec.get("headGroupSpec"), Mapping):
                p = root + ("headGroupSpec",)
                out.append((Signal("ray start (KubeRay head)", "ray", p, None), [p]))
            groups = spec.get("workerGroupSpecs")
            if isinstance(groups, list):
                for i, g in enumerate(groups):
                    if isinstance(g, dict):
                        p = root + ("workerGroupSpecs", i)
                        out.append((Signal("ray start (KubeRay worker)", "ray", p, None), [p]))
    return out


def workload_signals(obj: Mapping[str, Any]) -> list[Signal]:
    """Multi-process settings of an operator object (paths from the root)."""
    if not isinstance(obj, dict):
        return []
    return [s for s, _ in _scoped(obj)]


def signals_for_template(obj: Mapping[str, Any], template_path: tuple) -> list[Signal]:
    """The workload signals that apply to the pod template at template_path."""
    if not isinstance(obj, dict):
        return []
    tp = tuple(template_path)
    return [s for s, scopes in _scoped(obj) if any(tp[: len(p)] == p for p in scopes)]
