"""tx8c-opt: an mlir-opt style driver for tx8be IR.

    tx8c-opt input.mlir -p infer-shapes [-o out.mlir] [--split-input-file]
             [--verify-diagnostics] [--parsing-diagnostics]

Parses the file (or stdin), runs the passes given with `-p a,b{opt=v}` and prints the
result. It is xDSL's opt main with the builtin, func and tx8be dialects and tx8c's passes
registered, made safe for any input:

- the whole input is read, checked (`tx8c.ir.check_ir_text`: no parser hang, no stack
  overflow, UTF-8 text) and processed before anything is written; `-o` is written
  atomically at the end (`tx8c.cli.files`), never when a step fails, and never over the
  input file;
- a module with dynamic (`?`) dimensions is rejected before the passes see it;
- malformed input, an unknown or malformed pass pipeline, a bad option or IR that fails
  verification gives a diagnostic and exit code 1; a crash inside tx8c gives exit code 2
  and says it is a bug (exit codes as in `tx8c.cli.common`). With `--verify-diagnostics`
  / `--parsing-diagnostics` the diagnostic is printed to stdout and the exit code is 0,
  for negative lit tests.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Sequence
from io import StringIO
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from tx8c.cli.common import ArgumentParser, run_reporting_errors
from tx8c.cli.files import write_file
from tx8c.errors import Tx8Error
from tx8c.ir import (
    IRTextError,
    check_ir_text,
    check_static_shapes,
    parse_guarded,
    read_ir_file,
)

SPLIT_MARKER = "// -----"


class Tx8cOptMain(xDSLOptMain):
    version_format = "tx8c-opt (xdsl {xdsl_version})"

    def __init__(self, description: str, args: Sequence[str] | None = None):
        # xDSLOptMain.__init__, with tx8c's argument parser (usage errors exit 1)
        self.available_frontends = {}
        self.available_passes = {}
        self.available_targets = {}
        self.ctx = Context()
        self.register_all_dialects()
        self.register_all_frontends()
        self.register_all_passes()
        self.register_all_targets()
        parser = ArgumentParser(prog="tx8c-opt", description=description)
        self.register_all_arguments(parser)
        self.args = parser.parse_args(args=args)
        if self.args.target != "mlir":
            parser.error(f"argument -t/--target: tx8c-opt prints MLIR only (-t mlir), "
                         f"got '{self.args.target}'")
        self.ctx.allow_unregistered = self.args.allow_unregistered_dialect
        if self.args.disable_verify:  # as xDSL's opt main: attributes are not verified
            from xdsl.ir import Attribute
            from xdsl.xdsl_opt_main import _empty_post_init

            Attribute.__post_init__ = _empty_post_init
        self.setup_pipeline()

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

    def register_all_targets(self) -> None:
        """Only MLIR text: xDSL's other targets need modules tx8c does not install."""
        from xdsl.universe import Universe

        self.available_targets["mlir"] = Universe.get_multiverse().all_targets["mlir"]

    def setup_pipeline(self) -> None:
        try:
            super().setup_pipeline()
        except (Exception, ArgSpecParseError) as e:  # xDSL raises several kinds
            known = ", ".join(sorted(self.available_passes)) or "(none)"
            detail = str(e).strip() or type(e).__name__
            raise Tx8Error(
                f"cannot use the pass pipeline '{self.args.passes}': {detail}. Write it as "
                f"-p pass-a,pass-b{{option=value}}. Available passes: {known}"
            ) from None

    # -- input -------------------------------------------------------------------------
    def read_input(self) -> tuple[str, str]:
        """(text, name) of the input file or stdin."""
        path = self.args.input_file
        if path is None:
            try:
                return sys.stdin.buffer.read().decode("utf-8"), "stdin"
            except UnicodeDecodeError:
                raise IRTextError("stdin is not UTF-8 text; tx8c-opt reads MLIR text.") from None
        if Path(path).suffix == ".onnx":
            raise Tx8Error(
                f"'{path}' is an ONNX model; tx8c-opt reads tx8be IR (.mlir). Import the "
                f"model with `tx8c compile {path} -o OUT/` and give OUT/model.mlir."
            )
        return read_ir_file(path), path

    def chunks(self, text: str) -> list[tuple[str, int]]:
        """The pieces to process and the line each starts at (0-based)."""
        if not self.args.split_input_file:
            return [(text, 0)]
        pieces = text.split(SPLIT_MARKER)
        starts = [0]
        for piece in pieces[:-1]:
            starts.append(starts[-1] + piece.count("\n"))
        return list(zip(pieces, starts, strict=True))

    def parse_text(self, chunk: str, name: str, line_offset: int) -> ModuleOp:
        # leading newlines make every position the file's own
        check_ir_text("\n" * line_offset + chunk, name)
        parser = Parser(self.ctx, chunk, name)
        try:
            module = parse_guarded(
                lambda: parser.parse_module(not self.args.no_implicit_module), name)
        except ParseError as e:
            e.span = dataclasses.replace(e.span, line_offset=line_offset)
            raise
        self.read_constants(module, name)
        return module

    def read_constants(self, module: ModuleOp, name: str) -> None:
        """A model.mlir written by `tx8c compile` names consts.json beside it: read the
        constants into the module, so passes see them and the output carries them."""
        from tx8c.const_container import ConstContainer

        source = Path(name)
        ConstContainer.inline(module, source.parent if source.is_file() else None)

    # -- the run -----------------------------------------------------------------------
    def process(self, chunk: str, name: str, line_offset: int, out: StringIO) -> None:
        """Parse, check, run the passes on and print one chunk (or print its diagnostic
        when the diagnostics flags ask for it, as xDSL's opt main does)."""
        try:
            module = self.parse_text(chunk, name, line_offset)
            check_static_shapes(module, name)
            if not self.args.disable_verify:
                module.verify()
            self.apply_passes(module)
        except ParseError as e:
            if not self.args.parsing_diagnostics:
                raise
            print(e)
            return
        except DiagnosticException as e:
            if not self.args.verify_diagnostics:
                raise
            print(e)
            for note in getattr(e, "__notes__", ()):
                print(note)
            return
        out.write(self.output_resulting_program(module))

    def run(self) -> None:
        text, name = self.read_input()
        output = Path(self.args.output_file) if self.args.output_file else None
        inputs = [self.args.input_file] if self.args.input_file else []
        if output is not None:
            from tx8c.cli.files import check_output_file

            check_output_file(output, inputs)
        out = StringIO()
        for i, (chunk, line_offset) in enumerate(self.chunks(text)):
            if i > 0:
                out.write(SPLIT_MARKER + "\n")
            self.process(chunk, name, line_offset, out)
        if output is None:
            sys.stdout.write(out.getvalue())
            sys.stdout.flush()
        else:
            write_file(output, out.getvalue(), inputs=inputs)

def _diagnostic_text(e: Exception) -> str:
    return str(e).strip("\n")


def main(argv: Sequence[str] | None = None) -> int:
    from xdsl.ir import Attribute

    verify_attributes = Attribute.__post_init__  # --disable-verify replaces it

    def command() -> int:
        try:
            Tx8cOptMain(description="tx8c-opt: run tx8c passes on tx8be IR", args=argv).run()
        except ParseError as e:
            raise IRTextError(_diagnostic_text(e)) from None
        except DiagnosticException as e:  # xDSL's VerifyException, tx8be's OpRuleError
            raise Tx8Error(_diagnostic_text(e)) from None
        finally:
            Attribute.__post_init__ = verify_attributes
        return 0

    return run_reporting_errors(command)


if __name__ == "__main__":
    sys.exit(main())

