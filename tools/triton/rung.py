"""A Triton rung file, read and checked: what tools/triton/aot.py and interpret.py share.

A rung is variants/<op>/NN_triton_<name>.py (docs/triton.md): a header comment (Idea /
Why / Limits), its @triton.jit kernels and a dict WB_TRITON, the launch description:

    summary    one line, the idea
    numeric    "fp32", "tf32" or "bf16": the tolerance class it claims
    fields     the op's argument struct, field by field in its order: name -> type
               ("*fp32", "*bf16", "*i32" pointers; "i32", "i64" integers; "fp32" a float).
               These are the generated launcher's parameters, after the stream.
    params     name -> {"values": [...], "default": v[, "constexpr": "KERNEL_NAME"]}, the
               launch parameters wb sweeps; "num_warps" and "num_stages" are required and
               go to Triton's compiler, the others to the kernels' constexpr arguments.
    launches   the kernels run, in order, each {"kernel": fn, "grid": [1 to 3 expressions],
               "args": {kernel argument: expression}, "divisible": [kernel arguments]}.

An expression is an integer, a field, a parameter, + - * // on them, or cdiv(a, b): the
same text is evaluated here in Python (the interpreter) and translated to C (the
launcher), so the two cannot disagree on a grid. "divisible" names the arguments the
16-divisible specialisation assumes divisible by 16 (pointers: their address in bytes).

Errors in a rung are RungError, a message naming the file; the tools exit 2 on them.
"""
import ast
import hashlib
import importlib.util
import inspect
import itertools
import os
import re
import sys
import tempfile

FILE_NAME = re.compile(r"^0*([0-9]+)_triton_([a-z0-9_]+)\.py$")
OP_NAME = re.compile(r"^[a-z0-9_]+$")
PARAM_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
POINTER_TYPES = {"*fp32": "float", "*bf16": "bf16", "*i32": "int32"}
SCALAR_TYPES = {"i32", "i64", "fp32"}
COMPILER_PARAMS = ("num_warps", "num_stages")
NUMERIC = ("fp32", "tf32", "bf16")
HEADER_FIELDS = ("Idea:", "Why", "Limits:")
# The dimensions of wb's Shape (contract/shape.h) a requirement may name.
SHAPE_DIMS = ("B", "T", "C", "NH", "V", "Vp", "OC", "L", "N")
COMPARISONS = {"<=": "<=", ">=": ">=", "==": "==", "!=": "!=", "<": "<", ">": ">"}
# Triton's kernels take these two pointers after their own arguments (3.6: zero when the
# kernel needs no global or profile scratch, which aot.py checks).
SCRATCH_ARGUMENTS = 2


class RungError(Exception):
    pass


def write_file(path, data):
    """data (bytes or str) to path through a temporary file beside it and a rename."""
    mode = "wb" if isinstance(data, bytes) else "w"
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), prefix="." + os.path.basename(path) + ".")
    try:
        with os.fdopen(fd, mode) as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def sha256_of(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


# --- expressions -------------------------------------------------------------------

class Expr:
    """An integer expression over the fields and parameters (see the module's text)."""

    def __init__(self, text, names, where):
        self.text = text
        try:
            tree = ast.parse(text, mode="eval").body
        except SyntaxError as e:
            raise RungError(f"{where}: '{text}' is not an expression ({e.msg})")
        self._check(tree, names, where)
        self.tree = tree

    def _check(self, node, names, where):
        if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
            return
        if isinstance(node, ast.Name):
            if node.id not in names:
                raise RungError(f"{where}: '{self.text}' names '{node.id}', which is neither a field nor a "
                                f"parameter (those are: {', '.join(sorted(names))})")
            return
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv)):
            self._check(node.left, names, where)
            self._check(node.right, names, where)
            return
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "cdiv"
                and len(node.args) == 2 and not node.keywords):
            for a in node.args:
                self._check(a, names, where)
            return
        raise RungError(f"{where}: '{self.text}' may hold only integers, fields, parameters, + - * // and "
                        f"cdiv(a, b)")

    def names(self):
        return sorted({n.id for n in ast.walk(self.tree) if isinstance(n, ast.Name) and n.id != "cdiv"})

    def is_name(self):
        return isinstance(self.tree, ast.Name)

    def value(self, env):
        def ev(node):
            if isinstance(node, ast.Constant):
                return node.value
            if isinstance(node, ast.Name):
                return int(env[node.id])
            if isinstance(node, ast.Call):
                a, b = (ev(x) for x in node.args)
                return -(-a // b)
            a, b = ev(node.left), ev(node.right)
            if isinstance(node.op, ast.Add):
                return a + b
            if isinstance(node.op, ast.Sub):
                return a - b
            if isinstance(node.op, ast.Mult):
                return a * b
            return a // b
        return ev(self.tree)

    def c(self, spell):
        """The expression in C, int64_t arithmetic; spell(name) is a name's C spelling."""
        def em(node):
            if isinstance(node, ast.Constant):
                return f"INT64_C({node.value})"
            if isinstance(node, ast.Name):
                return f"(int64_t)({spell(node.id)})"
            if isinstance(node, ast.Call):
                a, b = (em(x) for x in node.args)
                return f"wb_triton_cdiv({a}, {b})"
            op = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "/"}[type(node.op)]
            return f"({em(node.left)} {op} {em(node.right)})"
        return em(self.tree)


class Requirement:
    """A condition on the shape a rung needs, "lhs OP rhs" with two expressions over
    wb's shape dimensions: wb skips a shape that fails it, with the text as the reason
    (as a CUDA rung's Requirement)."""

    def __init__(self, text, where):
        m = re.match(r"^(.*?)(<=|>=|==|!=|<|>)(.*)$", text)
        if not m:
            raise RungError(f"{where}: '{text}' is not a comparison (<=, >=, ==, !=, <, >) of two expressions")
        self.text = text
        self.op = COMPARISONS[m.group(2)]
        self.lhs = Expr(m.group(1).strip(), SHAPE_DIMS, f"{where} '{text}'")
        self.rhs = Expr(m.group(3).strip(), SHAPE_DIMS, f"{where} '{text}'")

    def holds(self, env):
        a, b = self.lhs.value(env), self.rhs.value(env)
        return {"<=": a <= b, ">=": a >= b, "==": a == b, "!=": a != b, "<": a < b, ">": a > b}[self.op]

    def c(self, spell):
        return f"{self.lhs.c(spell)} {self.op} {self.rhs.c(spell)}"


def kernel_params(kernel):
    """[(name, is constexpr)] of a @triton.jit function, compiled or interpreted (both
    keep the Python function as .fn); None when kernel is not one."""
    fn = getattr(kernel, "fn", None)
    if not callable(fn) or not hasattr(kernel, "arg_names"):
        return None
    out = []
    for p in inspect.signature(fn).parameters.values():
        a = p.annotation
        text = a if isinstance(a, str) else getattr(a, "__name__", "")
        out.append((p.name, text.split(".")[-1] == "constexpr"))
    return out


# --- the rung ----------------------------------------------------------------------

class Launch:
    def __init__(self, index, kernel, grid, args, divisible, constexprs):
        self.index = index
        self.kernel = kernel           # the JITFunction
        self.name = kernel.__name__    # its Python name, the cubin's entry name
        self.grid = grid               # [Expr], 1 to 3
        self.args = args               # [(kernel argument, Expr, type)], the kernel's order
        self.divisible = divisible     # [kernel argument]
        self.constexprs = constexprs   # {kernel constexpr argument: parameter name}

    def signature(self):
        """ASTSource's signature: every argument's type, 'constexpr' for the constexprs."""
        sig = {name: ty for name, _, ty in self.args}
        for name in self.constexprs:
            sig[name] = "constexpr"
        # The kernel's own order: ASTSource binds the signature by name, but a
        # readable manifest keeps the order of the def.
        return {n: sig[n] for n, _ in kernel_params(self.kernel)}

    def arg_names(self):
        return [n for n, _ in kernel_params(self.kernel)]


class Rung:
    def __init__(self, path):
        self.path = os.path.abspath(path)
        base = os.path.basename(self.path)
        m = FILE_NAME.match(base)
        self.op = os.path.basename(os.path.dirname(self.path))
        if not m or not OP_NAME.match(self.op):
            raise RungError(f"{path}: a Triton rung is named <op>/NN_triton_<name>.py (NN its id, the name in "
                            f"lower case, digits and '_'), e.g. variants/gelu_forward/03_triton_sigmoid.py")
        self.id = int(m.group(1))
        if self.id == 0:
            raise RungError(f"{path}: ids start at 1")
        self.name = "triton_" + m.group(2)
        self.stem = base[:-3]
        self.symbol = f"wb_triton_{self.op}_{self.id}"  # the generated launcher's prefix
        self.sha256 = sha256_of(self.path)
        self.header = self._read_header()
        module = self._import()
        desc = getattr(module, "WB_TRITON", None)
        if not isinstance(desc, dict):
            raise RungError(f"{path}: no WB_TRITON dict, the launch description (docs/triton.md)")
        self._read(desc)

    def where(self, what=""):
        return f"{self.path}{': ' + what if what else ''}"

    def _read_header(self):
        with open(self.path, encoding="utf-8") as f:
            lines = f.read().splitlines()
        header = []
        for line in lines:
            if not line.startswith("#"):
                break
            header.append(line[1:].strip())
        text = "\n".join(header)
        missing = [h for h in HEADER_FIELDS if not re.search(r"(^|\n)" + re.escape(h), text)]
        if not header or missing:
            raise RungError(self.where(f"the file opens with a comment of its idea, why it should beat the rung "
                                       f"before it, and its limits; missing: {', '.join(missing) or 'the comment'}"))
        return text

    def _import(self):
        name = f"wb_triton_rung_{self.op}_{self.id}"
        spec = importlib.util.spec_from_file_location(name, self.path)
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except Exception as e:  # a rung that does not import is bad input, named
            raise RungError(self.where(f"does not import: {type(e).__name__}: {e}"))
        return module

    def _read(self, d):
        unknown = set(d) - {"summary", "numeric", "fields", "params", "launches", "requirements"}
        if unknown:
            raise RungError(self.where(f"WB_TRITON has unknown keys: {', '.join(sorted(unknown))}"))
        self.summary = d.get("summary")
        if not isinstance(self.summary, str) or not self.summary.strip() or "\n" in self.summary:
            raise RungError(self.where("WB_TRITON['summary'] must be one line"))
        self.numeric = d.get("numeric")
        if self.numeric not in NUMERIC:
            raise RungError(self.where(f"WB_TRITON['numeric'] must be one of {', '.join(NUMERIC)}"))

        fields = d.get("fields")
        if not isinstance(fields, dict) or not fields:
            raise RungError(self.where("WB_TRITON['fields'] must map the op's argument fields to their types"))
        for name, ty in fields.items():
            if ty not in POINTER_TYPES and ty not in SCALAR_TYPES:
                raise RungError(self.where(f"field '{name}' has type '{ty}'; the types are "
                                           f"{', '.join(list(POINTER_TYPES) + sorted(SCALAR_TYPES))}"))
            if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name):
                raise RungError(self.where(f"field '{name}' is not a C name"))
        self.fields = dict(fields)

        params = d.get("params")
        if not isinstance(params, dict):
            raise RungError(self.where("WB_TRITON['params'] must map parameter names to their legal values"))
        for required in COMPILER_PARAMS:
            if required not in params:
                raise RungError(self.where(f"WB_TRITON['params'] must declare '{required}'"))
        self.params = {}
        constexpr_of = {}
        for name, p in params.items():
            if not PARAM_NAME.match(name) or name in self.fields:
                raise RungError(self.where(f"parameter '{name}' must be snake_case and not a field's name"))
            values = p.get("values") if isinstance(p, dict) else None
            if (not isinstance(values, list) or not values or len(set(values)) != len(values)
                    or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in values)):
                raise RungError(self.where(f"parameter '{name}': 'values' must be distinct positive integers"))
            if p.get("default") not in values:
                raise RungError(self.where(f"parameter '{name}': its default {p.get('default')} is not one of "
                                           f"its values {values}"))
            unknown = set(p) - {"values", "default", "constexpr"}
            if unknown:
                raise RungError(self.where(f"parameter '{name}' has unknown keys: {', '.join(sorted(unknown))}"))
            if name in COMPILER_PARAMS:
                if "constexpr" in p:
                    raise RungError(self.where(f"parameter '{name}' goes to Triton's compiler, not to a constexpr"))
                if name == "num_warps" and not all(v & (v - 1) == 0 for v in values):
                    raise RungError(self.where("num_warps must be powers of two"))
            else:
                if not isinstance(p.get("constexpr"), str):
                    raise RungError(self.where(f"parameter '{name}' must name the kernels' constexpr argument it "
                                               f"sets ('constexpr')"))
                constexpr_of[p["constexpr"]] = name
            self.params[name] = {"values": list(values), "default": p["default"]}
            if "constexpr" in p:
                self.params[name]["constexpr"] = p["constexpr"]

        launches = d.get("launches")
        if not isinstance(launches, list) or not launches:
            raise RungError(self.where("WB_TRITON['launches'] must list the kernels to run"))
        names = set(self.fields) | set(self.params)
        self.launches = []
        for i, l in enumerate(launches):
            self.launches.append(self._read_launch(i, l, names, constexpr_of))
        used = {c for l in self.launches for c in l.constexprs}
        for c, p in constexpr_of.items():
            if c not in used:
                raise RungError(self.where(f"parameter '{p}' sets '{c}', which no kernel takes"))

        self.requirements = []
        reqs = d.get("requirements", [])
        if not isinstance(reqs, list) or not all(isinstance(r, str) for r in reqs):
            raise RungError(self.where("WB_TRITON['requirements'] must list conditions on the shape, "
                                       "e.g. \"C // NH <= 64\""))
        for text in reqs:
            self.requirements.append(Requirement(text, self.where("requirement")))

    def _read_launch(self, i, l, names, constexpr_of):
        where = f"launch {i}"
        kernel = l.get("kernel") if isinstance(l, dict) else None
        params = kernel_params(kernel)
        if params is None:
            raise RungError(self.where(f"{where}: 'kernel' must be a @triton.jit function"))
        unknown = set(l) - {"kernel", "grid", "args", "divisible"}
        if unknown:
            raise RungError(self.where(f"{where} has unknown keys: {', '.join(sorted(unknown))}"))
        where = f"launch {i} ({kernel.__name__})"
        grid = l.get("grid")
        if not isinstance(grid, list) or not 1 <= len(grid) <= 3:
            raise RungError(self.where(f"{where}: 'grid' must list 1 to 3 expressions"))
        grid = [Expr(g, names, self.where(where + " grid")) for g in grid]
        given = l.get("args") or {}
        args, constexprs = [], {}
        for name, is_constexpr in params:
            if is_constexpr:
                if name not in constexpr_of:
                    raise RungError(self.where(f"{where}: its constexpr argument '{name}' is set by no parameter"))
                constexprs[name] = constexpr_of[name]
                continue
            if name not in given:
                raise RungError(self.where(f"{where}: 'args' does not say what the kernel's argument '{name}' is"))
            e = Expr(given[name], names, self.where(f"{where} argument {name}"))
            if e.is_name() and e.text in self.fields:
                ty = self.fields[e.text]
            else:
                if any(self.fields.get(n, "i32") in POINTER_TYPES for n in e.names()):
                    raise RungError(self.where(f"{where}: argument '{name}' computes on a pointer; pass the field"))
                ty = "i64" if any(self.fields.get(n) == "i64" for n in e.names()) else "i32"
            if ty == "fp32" and not e.is_name():
                raise RungError(self.where(f"{where}: argument '{name}': a float passes a field as it is"))
            args.append((name, e, ty))
        extra = set(given) - {a[0] for a in args}
        if extra:
            raise RungError(self.where(f"{where}: 'args' names arguments the kernel does not take: "
                                       f"{', '.join(sorted(extra))}"))
        divisible = l.get("divisible", [])
        arg_types = {a[0]: a[2] for a in args}
        for name in divisible:
            if arg_types.get(name) not in list(POINTER_TYPES) + ["i32", "i64"]:
                raise RungError(self.where(f"{where}: 'divisible' names '{name}', not a pointer or integer "
                                           f"argument of the kernel"))
        return Launch(i, kernel, grid, args, list(divisible), constexprs)

    # --- parameters ---

    def all_params(self):
        """Every combination of legal values, as dicts in the declared order."""
        names = list(self.params)
        return [dict(zip(names, combo)) for combo in itertools.product(*(self.params[n]["values"] for n in names))]

    def complete(self, given):
        """given (name -> int) checked and completed with defaults; RungError when illegal."""
        out = {}
        for name in given:
            if name not in self.params:
                raise RungError(self.where(f"no parameter '{name}' (the parameters are: {', '.join(self.params)})"))
        for name, p in self.params.items():
            v = given.get(name, p["default"])
            if v not in p["values"]:
                raise RungError(self.where(f"parameter {name}={v} is not legal (legal: {p['values']})"))
            out[name] = v
        return out

    @staticmethod
    def params_text(values):
        return ",".join(f"{k}={v}" for k, v in values.items())


def load(path):
    """The rung at path, checked; RungError (a message) when it is not one."""
    if not os.path.isfile(path):
        raise RungError(f"{path}: no such file")
    return Rung(path)


def fail(message, code=2):
    print(message, file=sys.stderr)
    sys.exit(code)
