"""PPO from stable-baselines3 on a Gymnasium MuJoCo environment, trained until its policy reaches
a target return in MuJoCo: the environment steps it needed, for the comparison in
bench/hopper_policy.py.

PPO runs at its best published settings for Hopper: RL Baselines3 Zoo's tuned hyperparameters
(hyperparams/ppo.yml, Hopper: one environment, VecNormalize on observations and rewards,
n_steps 512, batch 32, γ 0.999, learning rate 9.80828e-5, entropy 0.00229519, clip 0.2,
5 epochs, λ 0.99, max grad norm 0.7, value coefficient 0.835671, ReLU [256, 256] policy and value
networks, log σ initial −2, no orthogonal init). Every --eval-every environment steps the
policy is evaluated deterministically on --eval-episodes episodes of a separate environment
(the observation normalization frozen at its training values), and the run stops at the first
evaluation whose mean return reaches --target, or at --max-steps.

  sb3_ppo.py --target R [--env Hopper-v5] [--max-steps 1000000] [--eval-every 10000]
             [--eval-episodes 10] [--seed 0] [--json out.json]
"""
import argparse
import json
import sys
import time


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--target", type=float, required=True)
    p.add_argument("--env", default="Hopper-v5")
    p.add_argument("--max-steps", type=int, default=1_000_000)
    p.add_argument("--eval-every", type=int, default=10_000)
    p.add_argument("--eval-episodes", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1, help="torch threads")
    p.add_argument("--json")
    args = p.parse_args(argv)
    if args.max_steps < 1 or args.eval_every < 1 or args.eval_episodes < 1:
        p.error("--max-steps, --eval-every and --eval-episodes: at least 1")
    import gymnasium as gym
    import numpy as np
    import stable_baselines3
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    torch.set_num_threads(args.threads)
    train = VecNormalize(DummyVecEnv([lambda: gym.make(args.env)]), gamma=0.999)
    train.seed(args.seed)
    model = PPO("MlpPolicy", train, seed=args.seed, n_steps=512, batch_size=32, gamma=0.999,
                learning_rate=9.80828e-05, ent_coef=0.00229519, clip_range=0.2, n_epochs=5,
                gae_lambda=0.99, max_grad_norm=0.7, vf_coef=0.835671, verbose=0,
                policy_kwargs=dict(log_std_init=-2, ortho_init=False, activation_fn=torch.nn.ReLU,
                                   net_arch=dict(pi=[256, 256], vf=[256, 256])))
    evaluator = gym.make(args.env)

    def evaluate():
        returns = []
        for e in range(args.eval_episodes):
            obs, _ = evaluator.reset(seed=10_000 + e)
            total, done = 0.0, False
            while not done:
                o = train.normalize_obs(obs[None, :])
                action, _ = model.predict(o, deterministic=True)
                obs, r, terminated, truncated, _ = evaluator.step(action[0])
                total += r
                done = terminated or truncated
            returns.append(total)
        return float(np.mean(returns)), float(np.std(returns))

    curve, reached, t0, train_s = [], None, time.perf_counter(), 0.0
    steps = 0
    while steps < args.max_steps:
        chunk = min(args.eval_every, args.max_steps - steps)
        ts = time.perf_counter()
        model.learn(total_timesteps=chunk, reset_num_timesteps=False)
        train_s += time.perf_counter() - ts
        steps = model.num_timesteps
        mean, std = evaluate()
        curve.append({"steps": steps, "return_mean": mean, "return_std": std})
        print(f"{steps} steps: return {mean:.1f} ± {std:.1f} ({train_s:.0f} s training)", flush=True)
        if reached is None and mean >= args.target:
            reached = steps
            break
    out = {"env": args.env, "target": args.target, "steps_to_target": reached,
           "max_steps": args.max_steps, "eval_every": args.eval_every,
           "eval_episodes": args.eval_episodes, "seed": args.seed, "curve": curve,
           "train_seconds": train_s, "wall_seconds": time.perf_counter() - t0,
           "stable_baselines3": stable_baselines3.__version__, "torch": torch.__version__,
           "gymnasium": gym.__version__, "hyperparameters": "rl-baselines3-zoo ppo.yml Hopper"}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    print(f"steps to reach {args.target:.1f}: {reached}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
