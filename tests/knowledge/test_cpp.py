"""The C++ miner against a small JAX-style source tree holding every form it reads."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from app.jaxref.scope import backend_of
from app.knowledge.cpp_sites import mine_cpp, read_op_names
from app.knowledge.sites import CPP_ERROR_CLASS, Site

SOURCE = Path(__file__).parent.parent / "fixtures" / "jax_source"
MOSAIC = "jaxlib/mosaic"
TPU_OPS = f"{MOSAIC}/dialect/tpu/tpu_ops.cc"
GPU_OPS = f"{MOSAIC}/dialect/gpu/mosaic_gpu.cc"
CUSTOM_CALL = f"{MOSAIC}/gpu/custom_call.cc"
SERDE = f"{MOSAIC}/serde.cc"


def line_of(file_path: str, text: str) -> int:
    """The 1-based line of the fixture holding ``text``, which must hold it once."""
    lines = [
        number
        for number, line in enumerate((SOURCE / file_path).read_text().splitlines(), start=1)
        if text in line
    ]
    assert len(lines) == 1, (text, lines)
    return lines[0]


def site(
    file_path: str,
    line: int,
    template: str,
    pattern: str,
    function: str,
    condition: str | None,
    form: str,
    *,
    backend: str,
    error_class: str = CPP_ERROR_CLASS,
    via: str | None = None,
    status: str | None = None,
) -> Site:
    extra = {"form": form}
    if via:
        extra["via"] = via
    if status:
        extra["status"] = status
    return Site(
        file_path=file_path,
        line=line,
        kind="diagnostic",
        error_class=error_class,
        template=template,
        pattern=pattern,
        function=function,
        backend=backend,
        condition=condition,
        language="cpp",
        extra=extra,
    )


def tpu(*args: object, **kwargs: object) -> Site:
    return site(TPU_OPS, *args, backend="tpu", **kwargs)  # type: ignore[arg-type]


def gpu(file_path: str, *args: object, **kwargs: object) -> Site:
    return site(file_path, *args, backend="mosaic_gpu", **kwargs)  # type: ignore[arg-type]


EXPECTED = [
    pytest.param(
        tpu(
            line_of(TPU_OPS, 'return emitOpError("Expected operands of equal rank'),
            "'tpu.matmul' op Expected operands of equal rank, got {lhs_ty.getRank()} and "
            "{rhs_ty.getRank()}",
            r"'tpu\.matmul' op Expected operands of equal rank, got (.+?) and (.+?)",
            "mlir::tpu::MatmulOp::verify",
            "lhs_ty.getRank() != rhs_ty.getRank()",
            "emitOpError",
        ),
        id="verifier-op-name-and-streamed-values",
    ),
    pytest.param(
        tpu(
            line_of(TPU_OPS, '"Not implemented: operands with different element types "') - 1,
            "'tpu.matmul' op Not implemented: operands with different element types (lhs and rhs)",
            r"'tpu\.matmul' op Not implemented: operands with different element types "
            r"\(lhs and rhs\)",
            "mlir::tpu::MatmulOp::verify",
            "!(lhs_ty.getElementType() == rhs_ty.getElementType())",
            "emitOpError",
        ),
        id="multi-line-call-in-else-branch",
    ),
    pytest.param(
        tpu(
            line_of(TPU_OPS, 'return op.emitOpError() << "Rotate amount'),
            "'tpu.rotate' op Rotate amount must be non-negative, got '{amount}'",
            r"'tpu\.rotate' op Rotate amount must be non-negative, got '(.+?)'",
            "mlir::tpu::(anonymous)::verifyRotate",
            "amount < 0",
            "emitOpError",
        ),
        id="op-parameter-streamed-char",
    ),
    pytest.param(
        tpu(
            line_of(TPU_OPS, "return op->emitOpError(absl::StrFormat("),
            "'tpu.wait_dma' op Expected at most 2 semaphores (sem), got {semaphores}%",
            r"'tpu\.wait_dma' op Expected at most 2 semaphores \(sem\), got (.+?)%",
            "mlir::tpu::(anonymous)::WaitRule::match",
            "semaphores > 2",
            "emitOpError",
        ),
        id="strformat-in-class-method",
    ),
    pytest.param(
        tpu(
            line_of(TPU_OPS, "TPU_ASSERT_EQ_OP(shape.size(), 2);"),
            "'{op}' op Internal error: assert failed: shape.size() == 2 ({shape.size()} vs. 2)",
            r"'(.+?)' op Internal error: assert failed: shape\.size\(\) == 2 \((.+?) vs\. 2\)",
            "mlir::tpu::applyRule",
            "!((shape.size())==(2))",
            "emitOpError",
            via="TPU_ASSERT_EQ_OP",
        ),
        id="macro-nested-with-stringified-arguments-unknown-op",
    ),
    pytest.param(
        tpu(
            line_of(TPU_OPS, "TPU_ASSERT_OP("),
            "'{op}' op Internal error: assert failed: shape.front() > 0",
            r"'(.+?)' op Internal error: assert failed: shape\.front\(\) > 0",
            "mlir::tpu::applyRule",
            "!(shape.front() > 0)",
            "emitOpError",
            via="TPU_ASSERT_OP",
        ),
        id="macro-multi-line-use",
    ),
    pytest.param(
        tpu(
            line_of(TPU_OPS, 'return rotate.emitOpError("Rotate by a partial vreg: ")'),
            "'tpu.rotate' op Rotate by a partial vreg: {shape.back()}",
            r"'tpu\.rotate' op Rotate by a partial vreg: (.+?)",
            "mlir::tpu::applyRule",
            "shape.back() % 128",
            "emitOpError",
        ),
        id="op-from-declared-cast",
    ),
    pytest.param(
        tpu(
            line_of(TPU_OPS, "return cast<tpu::RotateOp>(op).emitOpError("),
            "'tpu.rotate' op Negative rotation",
            r"'tpu\.rotate' op Negative rotation",
            "mlir::tpu::applyRule",
            "shape.back() < 0",
            "emitOpError",
        ),
        id="op-from-cast-in-place",
    ),
    pytest.param(
        tpu(
            line_of(TPU_OPS, "op.emitError() << llvm::formatv("),
            "Target shape is not valid. Source: {0}, Target: {1}.",
            r"Target shape is not valid\. Source: (.+?), Target: (.+?)\.",
            "mlir::tpu::applyRule",
            "shape.back() > 1024",
            "emitError",
        ),
        id="emit-error-streamed-formatv",
    ),
    pytest.param(
        tpu(
            line_of(TPU_OPS, "TPU_ASSERT_LOC(loc, bitwidth <= 32);"),
            "Internal error: assert failed: bitwidth <= 32",
            "Internal error: assert failed: bitwidth <= 32",
            "mlir::tpu::checkLocation",
            "!(bitwidth <= 32)",
            "emitError",
            via="TPU_ASSERT_LOC",
        ),
        id="macro-with-location",
    ),
    pytest.param(
        tpu(
            line_of(TPU_OPS, 'return mlir::emitError(loc, "Unsupported bitwidth: ")'),
            "Unsupported bitwidth: {bitwidth}",
            "Unsupported bitwidth: (.+?)",
            "mlir::tpu::checkLocation",
            "bitwidth % 8 != 0",
            "emitError",
        ),
        id="mlir-emit-error-at-location",
    ),
    pytest.param(
        tpu(
            line_of(TPU_OPS, 'NYI("multi-result ops");'),
            "'{op}' op not implemented: multi-result ops",
            "'(.+?)' op not implemented: multi-result ops",
            "mlir::tpu::VectorLayoutInferer::infer",
            "op->getNumResults() > 1",
            "emitOpError",
            via="NYI",
        ),
        id="macro-defined-in-class-pasting-literals",
    ),
    pytest.param(
        tpu(
            line_of(TPU_OPS, 'return op.emitOpError("Negative tile: ") << tile;'),
            "'{op}' op Negative tile: {tile}",
            "'(.+?)' op Negative tile: (.+?)",
            "mlir::tpu::applyEach",
            "tile < 0",
            "emitOpError",
        ),
        id="inside-a-silent-macro",
    ),
    pytest.param(
        tpu(
            line_of(TPU_OPS, "TPU_ASSERT_IMPL(op.emitOpError(), tile < 1024);"),
            "'{op}' op Internal error: assert failed: tile < 1024",
            "'(.+?)' op Internal error: assert failed: tile < 1024",
            "mlir::tpu::applyEach",
            "!(tile < 1024)",
            "emitOpError",
            via="TPU_ASSERT_IMPL",
        ),
        id="macro-handed-a-diagnostic",
    ),
    pytest.param(
        gpu(
            GPU_OPS,
            line_of(GPU_OPS, 'return error("The `{0}` memref'),
            "'{op}' op The `{0}` memref must have a non-zero rank.",
            r"'(.+?)' op The `(.+?)` memref must have a non-zero rank\.",
            "mosaic_gpu::(anonymous)::VerifyCommonLoadStoreOp",
            "gmem_type.getRank() == 0",
            "emitOpError",
            via="error",
        ),
        id="lambda-wrapper-unknown-op",
    ),
    pytest.param(
        gpu(
            GPU_OPS,
            line_of(GPU_OPS, 'op->emitOpError("Only allowed in the main function.");'),
            "'{op}' op Only allowed in the main function.",
            r"'(.+?)' op Only allowed in the main function\.",
            "mosaic_gpu::(anonymous)::VerifyCommonLoadStoreOp",
            None,
            "emitOpError",
        ),
        id="lambda-without-parameters",
    ),
    pytest.param(
        gpu(
            GPU_OPS,
            line_of(GPU_OPS, '"The size of `indices` must be equal') - 1,
            "'mosaic_gpu.async_load' op The size of `indices` must be equal to the rank of the "
            "source, {{got {0} and {1}}}.",
            r"'mosaic_gpu\.async_load' op The size of `indices` must be equal to the rank of "
            r"the source, \{got (.+?) and (.+?)\}\.",
            "mosaic_gpu::AsyncLoadOp::verify",
            "source_type.getRank() != getIndices().size()",
            "emitOpError",
            via="error",
        ),
        id="lambda-wrapper-formatv-in-verifier",
    ),
    pytest.param(
        gpu(
            GPU_OPS,
            line_of(GPU_OPS, "return kLayoutError(op,"),
            "'{op}' op Layouts of rank {0} are not supported.",
            r"'(.+?)' op Layouts of rank (.+?) are not supported\.",
            "mosaic_gpu::VerifyLayout",
            "rank > 2",
            "emitOpError",
            via="kLayoutError",
        ),
        id="lambda-wrapper-at-namespace-scope",
    ),
    pytest.param(
        gpu(
            CUSTOM_CALL,
            line_of(CUSTOM_CALL, "return absl::InvalidArgumentError("),
            "Unsupported SM version: sm_{sm}; expected at least {kMinSm}",
            "Unsupported SM version: sm_(.+?); expected at least (.+?)",
            "(anonymous)::GetSmVersion",
            "sm < kMinSm",
            "absl::InvalidArgumentError",
            status="INVALID_ARGUMENT",
        ),
        id="absl-strcat-after-declaring-macro",
    ),
    pytest.param(
        gpu(
            CUSTOM_CALL,
            line_of(CUSTOM_CALL, 'return absl::InternalError("Failed to construct'),
            "Failed to construct pass pipeline",
            "Failed to construct pass pipeline",
            "(anonymous)::GetSmVersion",
            "minor > 9",
            "absl::InternalError",
            status="INTERNAL",
        ),
        id="absl-literal",
    ),
    pytest.param(
        gpu(
            CUSTOM_CALL,
            line_of(CUSTOM_CALL, "return absl::UnimplementedError("),
            "{major} is not supported ($1 each)",
            r"(.+?) is not supported \(\$1 each\)",
            "(anonymous)::GetSmVersion",
            "major > 12",
            "absl::UnimplementedError",
            status="UNIMPLEMENTED",
        ),
        id="absl-substitute",
    ),
    pytest.param(
        gpu(
            CUSTOM_CALL,
            line_of(CUSTOM_CALL, "return llvm::createStringError("),
            "Failed to load {path}: error {code}",
            "Failed to load (.+?): error (.+?)",
            "(anonymous)::LoadLibrary",
            "code != 0",
            "createStringError",
        ),
        id="create-string-error",
    ),
    pytest.param(
        gpu(
            CUSTOM_CALL,
            line_of(CUSTOM_CALL, 'throw std::runtime_error("Failed to get device count");'),
            "Failed to get device count",
            "Failed to get device count",
            "(anonymous)::Synchronize",
            "device_count == 0",
            "throw std::runtime_error",
            error_class="RuntimeError",
        ),
        id="thrown-runtime-error",
    ),
    pytest.param(
        gpu(
            CUSTOM_CALL,
            line_of(CUSTOM_CALL, "THROW_IF(num_dropped > 0,"),
            "Mosaic GPU profiler error: activity records were dropped",
            "Mosaic GPU profiler error: activity records were dropped",
            "(anonymous)::Synchronize",
            "num_dropped > 0",
            "throw std::runtime_error",
            error_class="RuntimeError",
            via="THROW_IF",
        ),
        id="variadic-macro",
    ),
    pytest.param(
        gpu(
            CUSTOM_CALL,
            line_of(CUSTOM_CALL, "THROW_IF_CUPTI_ERROR(cuptiFinalize(),"),
            "Mosaic GPU profiler error: {s}: failed to detach CUPTI",
            "Mosaic GPU profiler error: (.+?): failed to detach CUPTI",
            "(anonymous)::Synchronize",
            "_result != CUPTI_SUCCESS",
            "throw std::runtime_error",
            error_class="RuntimeError",
            via="THROW_IF_CUPTI_ERROR",
        ),
        id="va-opt-with-arguments",
    ),
    pytest.param(
        gpu(
            CUSTOM_CALL,
            line_of(CUSTOM_CALL, "THROW_IF_CUPTI_ERROR(cuptiGetLastError());"),
            "Mosaic GPU profiler error: {s}: ",
            "Mosaic GPU profiler error: (.+?): ",
            "(anonymous)::Synchronize",
            "_result != CUPTI_SUCCESS",
            "throw std::runtime_error",
            error_class="RuntimeError",
            via="THROW_IF_CUPTI_ERROR",
        ),
        id="va-opt-without-arguments",
    ),
    pytest.param(
        site(
            SERDE,
            line_of(SERDE, 'module->emitError("Unsupported version: expected <= ")'),
            "Unsupported version: expected <= {highest} but got {version}",
            "Unsupported version: expected <= (.+?) but got (.+?)",
            "jaxlib::mosaic::RunSerde",
            "version > highest",
            "emitError",
            backend="core",
        ),
        id="core-emit-error-chain-on-next-line",
    ),
]


@pytest.fixture(scope="module")
def mined() -> list[Site]:
    return mine_cpp(SOURCE)


@pytest.mark.parametrize("expected", EXPECTED)
def test_each_form_is_mined_with_every_field(mined: list[Site], expected: Site) -> None:
    at_line = [s for s in mined if (s.file_path, s.line) == (expected.file_path, expected.line)]
    assert at_line == [expected]
    assert at_line[0].extra == expected.extra


def test_nothing_else_is_mined(mined: list[Site]) -> None:
    """Warnings, tests, macros that print nothing and a wrapper's own body are no sites."""
    assert [(s.file_path, s.line, s.template) for s in mined] == sorted(
        (param.values[0].file_path, param.values[0].line, param.values[0].template)
        for param in EXPECTED
    )


def test_op_names_come_from_the_td_files() -> None:
    assert read_op_names(SOURCE / MOSAIC) == {
        "MatmulOp": {"tpu": "tpu.matmul"},
        "RotateOp": {"tpu": "tpu.rotate"},
        "WaitOp": {"tpu": "tpu.wait_dma", "mosaic_gpu": "mosaic_gpu.wait"},
        "AsyncLoadOp": {"mosaic_gpu": "mosaic_gpu.async_load"},
    }


@pytest.mark.parametrize(
    ("file_path", "backend"),
    [
        ("jaxlib/mosaic/dialect/tpu/transforms/apply_vector_layout.cc", "tpu"),
        ("jaxlib/mosaic/dialect/gpu/mosaic_gpu.cc", "mosaic_gpu"),
        ("jaxlib/mosaic/gpu/custom_call.cc", "mosaic_gpu"),
        ("jaxlib/mosaic/serde.cc", "core"),
    ],
)
def test_backend_follows_the_directory(file_path: str, backend: str) -> None:
    assert backend_of(file_path) == backend


SAMPLE_VALUES = ["7", "[8, 128]", "vector<8x128xf32>", "(2, 3)", "a.b|c*", "{x}"]


def render(template: str) -> str:
    """The message JAX would print, with a sample value in each placeholder."""
    samples = itertools.cycle(SAMPLE_VALUES)

    def fill(match: re.Match[str]) -> str:
        if match.group() in ("{{", "}}"):
            return match.group()[0]
        return next(samples)

    return re.sub(r"\{\{|\}\}|\{[^{}]*\}", fill, template)


def test_every_rendered_template_matches_its_own_pattern(mined: list[Site]) -> None:
    assert mined
    for found in mined:
        message = render(found.template)
        assert re.fullmatch(found.pattern, message), (found.template, message)
