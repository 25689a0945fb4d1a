// An IREE 3.13 (torch-mlir) crash dync works around (`dync.frontends.pytorch.decompositions`,
// scatters over a negative dim made non-negative), pinned so that an upgrade that fixes it
// shows up here: `torch.zeros_like(x).scatter_(-1, x.argmax(-1, keepdim=True), 1.0)`, the
// one-hot of an argmax, crashes iree-compile (killed by SIGSEGV or SIGABRT, static shapes too;
// the first RUN line passes only on a crash, an exit status other than 0 or 1). The same
// scatter over dim 1 compiles and is right.
// RUN: %PYTHON -c "import subprocess, sys; sys.exit(subprocess.run(sys.argv[1:], capture_output=True).returncode in (0, 1))" iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.bad.vmfb
// RUN: sed -e 's/torch.constant.int -1/torch.constant.int 1/' %s | iree-compile - --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.vmfb
// RUN: iree-run-module --module=%t.vmfb --device=local-sync --function=main --input="2x6xf32=[1 2 3 4 5 6][6 5 4 3 2 1]" | FileCheck %s
// CHECK: 2x6xf32=[0 0 0 0 0 1][1 0 0 0 0 0]
func.func @main(%arg0: !torch.vtensor<[2,6],f32>) -> !torch.vtensor<[2,6],f32> {
    %int-1 = torch.constant.int -1
    %true = torch.constant.bool true
    %0 = torch.aten.argmax %arg0, %int-1, %true : !torch.vtensor<[2,6],f32>, !torch.int, !torch.bool -> !torch.vtensor<[2,1],si64>
    %none = torch.constant.none
    %false = torch.constant.bool false
    %1 = torch.aten.zeros_like %arg0, %none, %none, %none, %false, %none : !torch.vtensor<[2,6],f32>, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[2,6],f32>
    %float1.000000e00 = torch.constant.float 1.000000e+00
    %2 = torch.aten.scatter.value %1, %int-1, %0, %float1.000000e00 : !torch.vtensor<[2,6],f32>, !torch.int, !torch.vtensor<[2,1],si64>, !torch.float -> !torch.vtensor<[2,6],f32>
    return %2 : !torch.vtensor<[2,6],f32>
}
