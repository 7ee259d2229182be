// Records a "measured" trajectory of the Panda for the system-identification example
// (examples/sysid/README.md): MuJoCo (C API, Debian libmujoco-dev) simulates configs/mjcf/panda.xml
// with perturbed link masses and joint damping, driven by the PD law
//   τ = kp (q* − q) − kv q̇ + u_k,   q* the home pose,
// applied as the motor controls at the start of each step, and the excitation torques u_k.
// Its Euler step, (M + h D) q̇⁺ = M q̇ + h (τ − c), q⁺ = q + h q̇⁺, is steer's `euler`
// integrator (tests/models/articulated/mujoco_crosscheck_test.cpp). Writes into OUT:
//   controls.csv   the excitation u_k, k = 0..T−1 (steer's controls.initial_file)
//   recorded.csv   t, joint1.q … joint7.q at t_k = k h, k = 0..T, each angle plus N(0, σ²) noise
//   truth.json     the perturbed values, the nominal ones and the recording's settings
// Usage: record_panda MJCF OUT [--steps T] [--noise SIGMA_RAD] [--seed N] [--kp KP] [--kv KV]
#include <mujoco/mujoco.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr int kDof = 7;
const double kHome[kDof] = {0, 0, 0, -1.57079, 0, 1.57079, -0.7853};
// the perturbation the example identifies: link masses (relative) and joint damping [N m s/rad]
const char* kMassBodies[5] = {"link3", "link4", "link5", "link6", "link7"};
const double kMassScale[5] = {1.15, 0.85, 1.20, 0.90, 1.10};
const double kDamping[kDof] = {1.5, 0.6, 1.3, 0.7, 1.4, 0.8, 1.2};
// excitation: u_j(t) = A_j sin(2π f_j t + φ_j) [N m]
const double kAmp[kDof] = {20, 25, 15, 15, 8, 8, 5};
const double kFreq[kDof] = {0.7, 1.1, 1.3, 0.9, 1.7, 2.3, 1.9};
const double kPhase[kDof] = {0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "record_panda: %s\nusage: record_panda MJCF OUT [--steps T] [--noise SIGMA_RAD] "
               "[--seed N] [--kp KP] [--kv KV]\n",
               why);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) usage("expected MJCF and OUT");
  const std::string mjcf = argv[1], out = argv[2];
  int steps = 750;
  double noise = 0, kp = 100, kv = 10;
  unsigned seed = 1;
  for (int i = 3; i < argc; i += 2) {
    if (i + 1 >= argc) usage("an option without its value");
    const std::string k = argv[i];
    const char* v = argv[i + 1];
    if (k == "--steps")
      steps = std::atoi(v);
    else if (k == "--noise")
      noise = std::atof(v);
    else if (k == "--seed")
      seed = unsigned(std::atoi(v));
    else if (k == "--kp")
      kp = std::atof(v);
    else if (k == "--kv")
      kv = std::atof(v);
    else
      usage(("unknown option " + k).c_str());
  }
  if (steps < 1 || noise < 0) usage("--steps must be >= 1 and --noise >= 0");
  char err[1000] = "";
  mjModel* m = mj_loadXML(mjcf.c_str(), nullptr, err, sizeof(err));
  if (!m) usage((mjcf + ": " + err).c_str());
  if (m->nv != kDof || m->nu != kDof) usage("expected the 7-joint Panda with 7 motors");
  std::vector<double> nominal_mass(5);
  for (int i = 0; i < 5; ++i) {
    const int b = mj_name2id(m, mjOBJ_BODY, kMassBodies[i]);
    if (b < 0) usage((std::string("no body ") + kMassBodies[i]).c_str());
    nominal_mass[size_t(i)] = m->body_mass[b];
    m->body_mass[b] *= kMassScale[i];
  }
  std::vector<double> nominal_damping(m->dof_damping, m->dof_damping + kDof);
  for (int j = 0; j < kDof; ++j) m->dof_damping[j] = kDamping[j];
  const double h = m->opt.timestep;
  mjData* d = mj_makeData(m);
  for (int j = 0; j < kDof; ++j) d->qpos[j] = kHome[j];
  mj_forward(m, d);

  std::mt19937_64 rng(seed);
  std::normal_distribution<double> gauss(0.0, 1.0);
  std::ofstream rec(out + "/recorded.csv"), ctl(out + "/controls.csv");
  if (!rec || !ctl) usage(("cannot write into " + out).c_str());
  rec.precision(17);
  ctl.precision(17);
  rec << "t";
  ctl << "torque.joint1";
  for (int j = 0; j < kDof; ++j) rec << ",joint" << j + 1 << ".q";
  for (int j = 1; j < kDof; ++j) ctl << ",torque.joint" << j + 1;
  rec << "\n";
  ctl << "\n";
  auto record = [&](int k) {
    rec << k * h;
    for (int j = 0; j < kDof; ++j) rec << "," << d->qpos[j] + noise * gauss(rng);
    rec << "\n";
  };
  record(0);
  double qmin[kDof], qmax[kDof];
  for (int j = 0; j < kDof; ++j) qmin[j] = qmax[j] = d->qpos[j];
  for (int k = 0; k < steps; ++k) {
    const double t = k * h;
    for (int j = 0; j < kDof; ++j) {
      const double u = kAmp[j] * std::sin(2 * M_PI * kFreq[j] * t + kPhase[j]);
      ctl << (j ? "," : "") << u;
      d->ctrl[j] = kp * (kHome[j] - d->qpos[j]) - kv * d->qvel[j] + u;
    }
    ctl << "\n";
    mj_step(m, d);
    if (d->nefc != 0)
      usage("a joint limit or contact became active; the example keeps clear of them");
    for (int j = 0; j < kDof; ++j)
      qmin[j] = std::fmin(qmin[j], d->qpos[j]), qmax[j] = std::fmax(qmax[j], d->qpos[j]);
    record(k + 1);
  }
  std::ofstream tj(out + "/truth.json");
  tj.precision(17);
  tj << "{\n  \"mjcf\": \"" << mjcf << "\",\n  \"steps\": " << steps << ", \"dt\": " << h
     << ", \"noise_rad\": " << noise << ", \"seed\": " << seed << ", \"kp\": " << kp
     << ", \"kv\": " << kv << ",\n  \"truth\": {";
  for (int i = 0; i < 5; ++i)
    tj << (i ? ", " : "") << "\"" << kMassBodies[i]
       << ".mass\": " << nominal_mass[size_t(i)] * kMassScale[i];
  for (int j = 0; j < kDof; ++j) tj << ", \"joint" << j + 1 << ".damping\": " << kDamping[j];
  tj << "},\n  \"nominal\": {";
  for (int i = 0; i < 5; ++i)
    tj << (i ? ", " : "") << "\"" << kMassBodies[i] << ".mass\": " << nominal_mass[size_t(i)];
  for (int j = 0; j < kDof; ++j)
    tj << ", \"joint" << j + 1 << ".damping\": " << nominal_damping[size_t(j)];
  tj << "},\n  \"q_span_rad\": [";
  for (int j = 0; j < kDof; ++j) tj << (j ? ", " : "") << qmax[j] - qmin[j];
  tj << "]\n}\n";
  mj_deleteData(d);
  mj_deleteModel(m);
  return 0;
}
