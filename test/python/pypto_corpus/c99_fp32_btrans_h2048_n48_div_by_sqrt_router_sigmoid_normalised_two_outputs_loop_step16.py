"""c99 (outside batch corpus17, k149) (fresh): fp32 router. fp32 x [T,2048] -> RMSNorm written as x / sqrt(mean(x^2) + eps) (a division by the
[rows,1] column) times fp32 gamma [1,2048] -> fp32 @ fp32 w [48, 2048] ([N,K], b_trans) -> logits (output 1) ->
sigmoid -> scores / sum(scores) (output 2).  pypto.loop(0, T, 16) with views valid_shape [pypto.min(16, T - i), ...]
and assemble at [i, 0].
Tolerance 1e-4 + 1e-3 (fp32).
"""
import numpy as np
from batch_harness import PTO, pypto, run

H, N, TILE, EPS = 2048, 48, 16, 1e-6
_RT = {} if PTO else {"run_mode": pypto.RunMode.SIM}


@pypto.frontend.jit(runtime_options=_RT)
def router_fp32(
    x: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_FP32),
    gamma: pypto.Tensor([1, H], pypto.DT_FP32),
    w: pypto.Tensor([N, H], pypto.DT_FP32),
    logits: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_FP32),
    probs: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_FP32),
):
    t = x.shape[0]
    for i in pypto.loop(0, t, TILE, name="ROUTER", idx_name="i"):
        valid = pypto.min(TILE, t - i)
        pypto.set_vec_tile_shapes(TILE, 512)
        xt = pypto.view(x, [TILE, H], [i, 0], valid_shape=[valid, H])
        ms = pypto.sum(pypto.mul(xt, xt), -1, keepdim=True)
        ms = pypto.div(ms, float(H))
        xn = pypto.div(xt, pypto.sqrt(pypto.add(ms, EPS)))
        xn = pypto.mul(xn, gamma)

        pypto.set_cube_tile_shapes([16, 16], [256, 512], [48, 48])
        lg = pypto.matmul(xn, w, pypto.DT_FP32, b_trans=True)

        pypto.set_vec_tile_shapes(TILE, N)
        s = pypto.sigmoid(lg)
        p = pypto.div(s, pypto.sum(s, -1, keepdim=True))
        pypto.assemble(lg, [i, 0], logits)
        pypto.assemble(p, [i, 0], probs)


def make_case(T):
    rng = np.random.default_rng(149 + T)
    x = rng.normal(0, 1, (T, H)).astype(np.float32)
    g = rng.uniform(0.5, 1.5, (1, H)).astype(np.float32)
    w = rng.normal(0, 0.03, (N, H)).astype(np.float32)
    xd = x.astype(np.float64)
    xn = xd / np.sqrt((xd * xd).mean(-1, keepdims=True) + EPS) * g
    lg = xn @ w.T.astype(np.float64)
    s = 1.0 / (1.0 + np.exp(-lg))
    p = s / s.sum(-1, keepdims=True)
    return ([(x, "fp32"), (g, "fp32"), (w, "fp32")], [((T, N), "fp32"), ((T, N), "fp32")],
            [lg, p], [(1e-4, 1e-3), (1e-4, 1e-3)], [])


if __name__ == "__main__":
    run("c99", router_fp32, make_case)
