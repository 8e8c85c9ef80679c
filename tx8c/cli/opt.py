"""tx8c-opt: an mlir-opt style driver for tx8be IR.

    tx8c-opt input.mlir -p infer-shapes [--split-input-file] [--verify-diagnostics]

Parses the file, runs the passes given with `-p a,b{opt=v}`, and prints the result. It is
xDSL's opt main with the builtin, func and tx8be dialects and tx8c's passes registered.
Malformed input, an unknown pass or IR that fails verification gives a diagnostic and exit
code 1, never a Python traceback (with `--verify-diagnostics` / `--parsing-diagnostics`
the diagnostic is printed to stdout and the exit code is 0, for negative lit tests).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException
from xdsl.xdsl_opt_main import xDSLOptMain

from tx8c.errors import Tx8Error


class Tx8cOptMain(xDSLOptMain):
    version_format = "tx8c-opt (xdsl {xdsl_version})"

    def register_all_dialects(self) -> None:
        from xdsl.dialects.builtin import Builtin
        from xdsl.dialects.func import Func

        from tx8c.dialect import tx8be_dialect

        self.ctx.register_dialect("builtin", lambda: Builtin)
        self.ctx.register_dialect("func", lambda: Func)
        self.ctx.register_dialect("tx8be", tx8be_dialect)

    def register_all_passes(self) -> None:
        from tx8c.passes import available_passes

        for name, factory in available_passes().items():
            self.register_pass(name, factory)

    def setup_pipeline(self) -> None:
        try:
            super().setup_pipeline()
        except ValueError as e:
            known = ", ".join(sorted(self.available_passes)) or "(none)"
            raise Tx8Error(f"{e}. Available passes: {known}") from None


def main(argv: Sequence[str] | None = None) -> int:
    try:
        Tx8cOptMain(description="tx8c-opt: run tx8c passes on tx8be IR", args=argv).run()
    except ParseError as e:
        print(str(e), file=sys.stderr)
        return 1
    except (VerifyException, DiagnosticException) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except Tx8Error as e:
        print(f"error: {e}", file=sys.stderr)
        return e.exit_code
    except FileNotFoundError as e:
        print(f"error: cannot open input file: {e.filename}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
