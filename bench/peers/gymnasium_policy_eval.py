"""Runs a controller trained in steer inside MuJoCo itself, through Gymnasium's own environment.

The policy is the one steer's controller computes (include/steer/controller.h):
  o_i = s_i (r_i − c_i),  a_l = φ_l(W_l a_{l−1} + b_l),  u = clamp(σ ⊙ a_L, lo, hi)
(u the joints' torques, steer's controls `torque.<joint>`; MuJoCo's ctrl of a motor on joint j
is u_j / gear) with r_i a joint's position or velocity read from MuJoCo's qpos / qvel (steer's state names
`<joint>.q`, `<joint>.v`), s_i, c_i, σ and the clamp from the run's effective config, and the
weights from the run's controller_weights.json. The environment is created with gymnasium.make
(Hopper-v5 by default: frame_skip 4, so an action is held for 4 MuJoCo steps, as
controller.action_hold 4 does in steer), its reward, termination and 1,000-step limit untouched.
The observation is built from the environment's MuJoCo data (unclipped velocities, as steer
sees them), not from Gymnasium's observation vector (whose velocities are clipped to ±10).

  gymnasium_policy_eval.py --policy policy.json [--env Hopper-v5] [--episodes 20] [--seed 0]
                           [--json out.json] [--start start.json --record N]

--start sets every episode's state after Gymnasium's reset to {"<joint>.q": value, "<joint>.v":
value, …} (steer's state names: the state a steer rollout starts from; joints not named keep
their reset value), and --record N writes qpos and qvel after each of the first N
actions of episode 0 into the JSON (`record`): the plumbing check of tests/tools/hopper_policy_test.py.

policy.json: {"observations": [{"state": name, "scale": s, "center": c}, …],
              "layers": [{"weight": [[…]], "bias": […], "activation": "tanh"}, …],
              "action_scale": [σ…], "clamp": [lo, hi] or null, "controls": [steer's control names]}
Prints one line per episode and writes the returns, lengths and final x positions.
"""
import argparse
import json
import sys

import numpy as np


def activation(kind, z):
    if kind == "tanh":
        return np.tanh(z)
    if kind == "relu":
        return np.maximum(z, 0.0)
    if kind == "elu":
        return np.where(z > 0, z, np.expm1(z))
    if kind == "linear":
        return z
    raise ValueError(f"unknown activation {kind!r}")


class Policy:
    def __init__(self, spec, model):
        import mujoco
        import mujoco
        self.model = model
        self.reads = [self.address(o["state"]) for o in spec["observations"]]  # (array, index)
        self.scale = np.array([o["scale"] for o in spec["observations"]], dtype=float)
        self.center = np.array([o["center"] for o in spec["observations"]], dtype=float)
        self.layers = [(np.array(l["weight"], dtype=float), np.array(l["bias"], dtype=float), l["activation"])
                       for l in spec["layers"]]
        self.sigma = np.array(spec["action_scale"], dtype=float)
        self.clamp = spec.get("clamp")
        # steer's controls are joint torques (`torque.<joint>`, N·m or N); MuJoCo's are its
        # actuators' ctrl, torque = gear · ctrl: each actuator reads its joint's output over its
        # gear, and a control with no actuator must be scaled to 0 (it would be a force MuJoCo lacks)
        self.to_ctrl = []
        for i in range(model.nu):
            if model.actuator_trntype[i] != mujoco.mjtTrn.mjTRN_JOINT:
                raise SystemExit(f"gymnasium_policy_eval.py: actuator {i} does not drive a joint")
            joint = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, int(model.actuator_trnid[i, 0]))
            name = f"torque.{joint}"
            if name not in spec["controls"]:
                raise SystemExit(f"gymnasium_policy_eval.py: no control {name} for actuator {i}")
            self.to_ctrl.append((spec["controls"].index(name), float(model.actuator_gear[i, 0])))
        driven = {c for c, _ in self.to_ctrl}
        idle = [spec["controls"][c] for c in range(len(spec["controls"])) if c not in driven and self.sigma[c] != 0]
        if idle:
            raise SystemExit(f"gymnasium_policy_eval.py: controls {idle} have no actuator in MuJoCo but a non-zero action scale")

    def address(self, name):
        """("qpos", i) or ("qvel", i) of steer's state name <joint>.q or <joint>.v"""
        import mujoco
        joint, _, part = name.rpartition(".")
        jid = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_JOINT, joint)
        if jid < 0 or part not in ("q", "v"):
            raise SystemExit(f"gymnasium_policy_eval.py: {name!r} is not <joint>.q or <joint>.v of the model")
        return ("qpos", int(self.model.jnt_qposadr[jid])) if part == "q" else ("qvel", int(self.model.jnt_dofadr[jid]))

    def __call__(self, data):
        r = np.array([getattr(data, arr)[i] for arr, i in self.reads])
        a = self.scale * (r - self.center)
        for w, b, kind in self.layers:
            a = activation(kind, w @ a + b)
        y = self.sigma * a
        if self.clamp is not None:
            y = np.clip(y, self.clamp[0], self.clamp[1])
        return np.array([y[c] / gear for c, gear in self.to_ctrl])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--policy", required=True)
    p.add_argument("--env", default="Hopper-v5")
    p.add_argument("--episodes", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json")
    p.add_argument("--start")
    p.add_argument("--record", type=int, default=0)
    args = p.parse_args(argv)
    if args.episodes < 1 or args.record < 0:
        p.error("--episodes: at least 1; --record: at least 0")
    import gymnasium as gym
    with open(args.policy) as f:
        spec = json.load(f)
    env = gym.make(args.env)
    policy = Policy(spec, env.unwrapped.model)
    start = None
    if args.start:
        with open(args.start) as f:
            start = json.load(f)
    episodes, record = [], []
    for e in range(args.episodes):
        env.reset(seed=args.seed + e)
        data = env.unwrapped.data
        if start is not None:
            qpos, qvel = data.qpos.copy(), data.qvel.copy()
            for name, value in start.items():
                arr, i = policy.address(name)
                (qpos if arr == "qpos" else qvel)[i] = value
            env.unwrapped.set_state(qpos, qvel)
        total, n, terminated, truncated = 0.0, 0, False, False
        while not (terminated or truncated):
            _, reward, terminated, truncated, info = env.step(policy(data))
            total += reward
            n += 1
            if e == 0 and n <= args.record:
                record.append({"qpos": data.qpos.tolist(), "qvel": data.qvel.tolist()})
        episodes.append({"seed": args.seed + e, "return": total, "length": n,
                         "terminated": bool(terminated), "x_final": float(data.qpos[0])})
        print(f"episode {e}: return {total:.1f}, {n} steps, x {data.qpos[0]:.3f} m", flush=True)
    returns = np.array([ep["return"] for ep in episodes])
    out = {"env": args.env, "gymnasium": gym.__version__, "mujoco": __import__("mujoco").__version__,
           "episodes": episodes, "return_mean": float(returns.mean()), "return_std": float(returns.std()),
           "record": record}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    print(f"mean return {returns.mean():.1f} ± {returns.std():.1f} over {len(returns)} episodes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
