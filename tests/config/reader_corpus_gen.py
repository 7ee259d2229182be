#!/usr/bin/env python3
"""Writes the malformed-config corpus tests/data/malformed/*.json and its manifest.

Each case is a small config with one defect (syntax, depth, types, ranges, unknown or
duplicate keys, includes, names, memory, cross-key rules, model sections, physical
validity). The manifest (manifest.tsv: file, then the text stderr must contain,
tab-separated) is what tests/config/reader_corpus.py checks: `steer run` exits 2, names that key,
stays under 2 KB of stderr and writes nothing. The big cases (deep nesting, huge strings, endless files) are made by
reader_corpus.py at run time instead of being committed.

Run from anywhere: python3 tests/config/reader_corpus_gen.py (rewrites the folder's .json files and
the manifest; the include fragments inc_*.frag are written too).
"""
import copy
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "data", "malformed")
# include paths are relative to the config's folder: tests/data/malformed -> configs/models
PANDA_ARM = "../../../configs/models/panda_arm.json"

PROJ = {
    "name": "corpus_projectile",
    "model": {"type": "projectile", "dim": 2, "gravity": 9.81, "ground": {"type": "none"}},
    "simulation": {"dt": 0.01, "steps": 40},
    "initial_state": {"position": [0.0, 0.0], "velocity": [2.5, 1.0]},
    "batch": {"size": 2, "seed": 3},
    "loss": {"terminal": [{"state": "position.x", "target": 1.0, "weight": 1.0}]},
    "variables": {"x0.velocity.x": {"lower": -10.0, "upper": 10.0}},
    "optimizer": {"method": "gd", "learning_rate": 0.1, "iterations": 2},
    "validation": {"enabled": True, "at": ["initial"], "tolerance": 1e-6},
    "output": {"trajectory_stride": 1, "trajectory_rollouts": 1},
}

MS = {
    "name": "corpus_mass_spring",
    "model": {
        "type": "mass_spring", "dim": 2,
        "robot": {"particles": [[0.2, 0.1], [0.3, 0.13], [0.2, 0.2], [0.3, 0.2]],
                  "springs": [[0, 1, 0.104, 14000, 0.1], [2, 3, 0.1, 14000, 0.1], [0, 2, 0.1, 14000, 0.0],
                              [1, 3, 0.07, 14000, 0.0]]},
        "ground": {"type": "penalty", "height": 0.1, "smoothing": 0.01},
    },
    "simulation": {"dt": 0.004, "steps": 30},
    "loss": {"com_displacement": {"axis": "x", "weight": -1.0}},
    "variables": {"theta.actuator.bias": {"lower": -5.0, "upper": 5.0}},
    "optimizer": {"method": "adam", "learning_rate": 0.01, "iterations": 2},
    "validation": {"at": ["initial"]},
    "output": {"trajectory_rollouts": 1},
}

ART = {
    "name": "corpus_articulated",
    "model": {"type": "articulated", "include": PANDA_ARM, "integrator": "euler"},
    "simulation": {"dt": 0.002, "steps": 20},
    "initial_state": {"q": [0, 0, 0, -1.57079, 0, 1.57079, -0.7853]},
    "loss": {"terminal": [{"state": "joint1.q", "target": 0.1}]},
    "variables": {"theta.kp": {"lower": 0, "upper": 1e5}},
    "optimizer": {"method": "none"},
    "validation": {"at": ["initial"], "max_rollouts": 1},
    "output": {"trajectory_rollouts": 1},
}

cases = []  # (file name, text, expected substring of stderr)


def raw(name, text, key):
    cases.append((name + ".json", text, key))


def edit(name, base, fn, key):
    j = copy.deepcopy(base)
    fn(j)
    cases.append((name + ".json", json.dumps(j, indent=1, ensure_ascii=False), key))


def setp(path, value):
    """an edit that sets a dotted path, or a list of keys (for keys holding dots such as
    "x0.velocity.x"), creating objects on the way"""
    def fn(j):
        keys = path if isinstance(path, list) else path.split(".")
        o = j
        for k in keys[:-1]:
            o = o.setdefault(k, {})
        o[keys[-1]] = value
    return fn


def delp(path):
    def fn(j):
        keys = path.split(".")
        o = j
        for k in keys[:-1]:
            o = o[k]
        del o[keys[-1]]
    return fn


good = json.dumps(PROJ, indent=1)

# ---- syntax: not JSON at all, or JSON that breaks off ----
SYN = "not valid JSON"
raw("syntax_empty", "", SYN)
raw("syntax_whitespace", "  \n\t \n", SYN)
raw("syntax_truncated", good[: len(good) // 2], SYN)
raw("syntax_truncated_in_string", good[: good.index("corpus_projectile") + 6], SYN)
raw("syntax_trailing_comma_object", good.replace('"seed": 3', '"seed": 3,'), SYN)
raw("syntax_trailing_comma_array", good.replace('"at": [\n   "initial"\n  ]', '"at": ["initial",]'), SYN)
raw("syntax_single_quotes", good.replace('"corpus_projectile"', "'corpus_projectile'"), SYN)
raw("syntax_line_comment", "// a comment\n" + good, SYN)
raw("syntax_block_comment", good.replace('"name"', '/* c */ "name"', 1), SYN)
raw("syntax_nan", good.replace('"target": 1.0', '"target": NaN'), SYN)
raw("syntax_infinity", good.replace('"target": 1.0', '"target": Infinity'), SYN)
raw("syntax_neg_infinity", good.replace('"target": 1.0', '"target": -Infinity'), SYN)
raw("syntax_unquoted_key", good.replace('"name"', "name", 1), SYN)
raw("syntax_missing_colon", good.replace('"name":', '"name"', 1), SYN)
raw("syntax_missing_comma", good.replace('"corpus_projectile",', '"corpus_projectile"', 1), SYN)
raw("syntax_extra_close", good + "}", SYN)
raw("syntax_two_roots", good + "\n" + good, SYN)
raw("syntax_leading_zero", good.replace('"steps": 40', '"steps": 040'), SYN)
raw("syntax_hex_number", good.replace('"steps": 40', '"steps": 0x28'), SYN)
raw("syntax_plus_number", good.replace('"steps": 40', '"steps": +40'), SYN)
raw("syntax_dot_number", good.replace('"dt": 0.01', '"dt": .01'), SYN)
raw("syntax_trailing_dot", good.replace('"steps": 40', '"steps": 40.'), SYN)
raw("syntax_bare_minus", good.replace('"steps": 40', '"steps": -'), SYN)
raw("syntax_exponent_no_digits", good.replace('"dt": 0.01', '"dt": 1e'), SYN)
raw("syntax_bad_escape", good.replace("corpus_projectile", "corpus\\xprojectile"), SYN)
raw("syntax_bad_unicode_escape", good.replace("corpus_projectile", "corpus\\u12G4"), SYN)
raw("syntax_lone_surrogate", good.replace("corpus_projectile", "corpus\\ud800x"), SYN)
raw("syntax_raw_newline_in_string", good.replace("corpus_projectile", "corpus\nprojectile"), SYN)
raw("syntax_raw_tab_in_string", good.replace("corpus_projectile", "corpus\tprojectile"), SYN)
raw("syntax_true_misspelt", good.replace('"enabled": true', '"enabled": ture'), SYN)
raw("syntax_null_misspelt", good.replace('"enabled": true', '"enabled": nul'), SYN)
raw("syntax_python_true", good.replace('"enabled": true', '"enabled": True'), SYN)
raw("syntax_unclosed_array", good.replace('"at": [\n   "initial"\n  ]', '"at": ["initial"'), SYN)
raw("syntax_key_not_string", good.replace('"name"', "42", 1), SYN)
raw("syntax_equals", good.replace('"name":', '"name" =', 1), SYN)
raw("syntax_yaml", "name: corpus\nmodel:\n  type: projectile\n", SYN)
raw("syntax_only_open", "{", SYN)
raw("syntax_garbage_after_bom", "\ufeff@@@", SYN)

# ---- the root is JSON but not an object ----
raw("root_array", "[" + good + "]", "(root)")
raw("root_number", "42", "(root)")
raw("root_string", '"a config"', "(root)")
raw("root_null", "null", "(root)")
raw("root_empty_object", "{}", "model")

# ---- numbers beyond a double, and integers beyond the accepted range ----
raw("number_overflow_dt", good.replace('"dt": 0.01', '"dt": 1e400'), "simulation.dt")
raw("number_overflow_negative", good.replace('"target": 1.0', '"target": -1e400'), "loss.terminal[0].target")
raw("number_overflow_long_digits", good.replace('"steps": 40', '"steps": 1' + "0" * 400), "simulation.steps")
raw("number_overflow_in_array", good.replace('"velocity": [\n   2.5', '"velocity": [\n   2e999'), "initial_state.velocity[0]")
raw("integer_beyond_int64", good.replace('"steps": 40', '"steps": 18446744073709551616'), "simulation.steps")
raw("integer_beyond_uint64_neg", good.replace('"seed": 3', '"seed": -9223372036854775809'), "batch.seed")
raw("integer_uint64_max", good.replace('"seed": 3', '"seed": 18446744073709551615'), "batch.seed")

# ---- depth (small enough to commit; the 100,000-level cases are made at run time) ----
def nest(n, leaf='0', kind="object"):
    if kind == "object":
        return '{"a": ' * n + leaf + "}" * n
    return "[" * n + leaf + "]" * n


raw("depth_objects_in_description", good.replace('"name": "corpus_projectile"', '"name": "corpus_projectile", "description": ' + nest(70)), "description")
raw("depth_arrays_in_description", good.replace('"name": "corpus_projectile"', '"name": "corpus_projectile", "description": ' + nest(100, kind="array")), "description")
raw("depth_arrays_in_target", good.replace('"target": 1.0', '"target": ' + nest(65, "1.0", "array")), "loss.terminal[0].target")
raw("depth_objects_in_model", good.replace('"dim": 2', '"dim": 2, "extra": ' + nest(80)), "model.extra")
raw("depth_mixed", good.replace('"seed": 3', '"seed": ' + '[{"a": ' * 40 + "0" + "}]" * 40), "batch.seed")
raw("depth_64_is_fine_but_unknown", good.replace('"dim": 2', '"dim": 2, "extra": ' + nest(62)), "model.extra")

# ---- wrong types ----
T = [
    ("type_name_number", "name", 5, "name"),
    ("type_name_null", "name", None, "name"),
    ("type_description_array", "description", ["a"], "description"),
    ("type_model_string", "model", "projectile", "model"),
    ("type_model_type_number", "model.type", 3, "model.type"),
    ("type_dim_string", "model.dim", "2", "model.dim"),
    ("type_gravity_bool", "model.gravity", True, "model.gravity"),
    ("type_ground_array", "model.ground", ["none"], "model.ground"),
    ("type_simulation_array", "simulation", [0.01, 40], "simulation"),
    ("type_dt_string", "simulation.dt", "0.01", "simulation.dt"),
    ("type_steps_float", "simulation.steps", 40.5, "simulation.steps"),
    ("type_steps_string", "simulation.steps", "40", "simulation.steps"),
    ("type_precision_number", "simulation.precision", 64, "simulation.precision"),
    ("type_backend_bool", "simulation.backend", True, "simulation.backend"),
    ("type_threads_string", "simulation.threads", "all", "simulation.threads"),
    ("type_checkpoint_every_float", "simulation.checkpoint_every", 2.5, "simulation.checkpoint_every"),
    ("type_batch_size_string", "batch.size", "2", "batch.size"),
    ("type_batch_seed_float", "batch.seed", 1.5, "batch.seed"),
    ("type_position_object", "initial_state.position", {"x": 0}, "initial_state.position"),
    ("type_velocity_strings", "initial_state.velocity", ["2.5", "1.0"], "initial_state.velocity[0]"),
    ("type_loss_array", "loss", [1], "loss"),
    ("type_terminal_object", "loss.terminal", {"state": "position.x"}, "loss.terminal"),
    ("type_variables_array", "variables", ["x0.velocity.x"], "variables"),
    ("type_variable_bound_string", ["variables", "x0.velocity.x"], {"lower": "-10", "upper": 10}, "variables.x0.velocity.x.lower"),
    ("type_optimizer_method_number", "optimizer.method", 1, "optimizer.method"),
    ("type_learning_rate_string", "optimizer.learning_rate", "0.1", "optimizer.learning_rate"),
    ("type_iterations_float", "optimizer.iterations", 2.5, "optimizer.iterations"),
    ("type_validation_at_string", "validation.at", "initial", "validation.at"),
    ("type_validation_at_number", "validation.at", [1], "validation.at[0]"),
    ("type_validation_enabled_string", "validation.enabled", "yes", "validation.enabled"),
    ("type_output_dir_number", "output.dir", 3, "output.dir"),
    ("type_output_stride_float", "output.trajectory_stride", 1.5, "output.trajectory_stride"),
    ("type_success_tolerance_string", "success_tolerance", "0.1", "success_tolerance"),
    ("type_controls_initial_string", "controls.initial", "zero", "controls.initial"),
]
for name, path, value, key in T:
    edit(name, PROJ, setp(path, value), key)
edit("type_terminal_entry_number", PROJ, setp("loss.terminal", [5]), "loss.terminal[0]")
edit("type_terminal_weight_string", PROJ, setp("loss.terminal", [{"state": "position.x", "target": 1.0, "weight": "1"}]), "loss.terminal[0].weight")
edit("type_terminal_state_number", PROJ, setp("loss.terminal", [{"state": 0, "target": 1.0}]), "loss.terminal[0].state")

# ---- out of range ----
R = [
    ("range_dt_zero", "simulation.dt", 0.0),
    ("range_dt_negative", "simulation.dt", -0.01),
    ("range_dt_large", "simulation.dt", 11.0),
    ("range_steps_zero", "simulation.steps", 0),
    ("range_steps_huge", "simulation.steps", 1000000000),
    ("range_checkpoint_every_zero", "simulation.checkpoint_every", 0),
    ("range_checkpoint_every_above_steps", "simulation.checkpoint_every", 41),
    ("range_checkpoint_memory_zero", "simulation.checkpoint_memory_mb", 0),
    ("range_checkpoint_memory_tiny", "simulation.checkpoint_memory_mb", 1e-9),
    ("range_store_forward_negative", "simulation.store_forward_mb", -1),
    ("range_threads_negative", "simulation.threads", -1),
    ("range_threads_huge", "simulation.threads", 5000),
    ("range_memory_limit_negative", "simulation.memory_limit_gb", -1),
    ("range_batch_size_zero", "batch.size", 0),
    ("range_batch_size_huge", "batch.size", 1 << 25),
    ("range_batch_seed_negative", "batch.seed", -1),
    ("range_learning_rate_zero", "optimizer.learning_rate", 0),
    ("range_iterations_negative", "optimizer.iterations", -1),
    ("range_beta1_one", "optimizer.beta1", 1.0),
    ("range_beta2_negative", "optimizer.beta2", -0.1),
    ("range_adam_epsilon_zero", "optimizer.epsilon", 0),
    ("range_gradient_clip_negative", "optimizer.gradient_clip", -1),
    ("range_log_every_zero", "optimizer.log_every", 0),
    ("range_validation_epsilon_large", "validation.epsilon", 2.0),
    ("range_validation_tolerance_zero", "validation.tolerance", 0),
    ("range_validation_max_rollouts_zero", "validation.max_rollouts", 0),
    ("range_energy_drift_zero", "validation.energy_drift_bound", 0),
    ("range_horizon_ratio_one", "validation.horizon_ratio_bound", 1.0),
    ("range_chatter_fraction_two", "validation.chatter_fraction", 2.0),
    ("range_penetration_bound_negative", "validation.penetration_bound", -1.0),
    ("range_trajectory_stride_zero", "output.trajectory_stride", 0),
    ("range_trajectory_stride_above_steps", "output.trajectory_stride", 41),
    ("range_trajectory_rollouts_negative", "output.trajectory_rollouts", -1),
    ("range_json_points_one", "output.json_trajectory_points", 1),
    ("range_dim_four", "model.dim", 4),
    ("range_mass_zero", "model.mass", 0.0),
    ("range_gravity_huge", "model.gravity", 1e5),
    ("range_drag_negative", "model.drag", -1.0),
    ("range_ground_stiffness_zero", "model.ground.stiffness", 0.0),
    ("range_success_tolerance_negative", "success_tolerance", -1.0),
]
for name, path, value in R:
    edit(name, PROJ, setp(path, value), path)
edit("range_velocity_huge", PROJ, setp("initial_state.velocity", [1e10, 0.0]), "initial_state.velocity[0]")
edit("range_position_size", PROJ, setp("initial_state.position", [0.0, 0.0, 0.0]), "initial_state.position")
edit("range_variable_lower_above_upper", PROJ, setp(["variables", "x0.velocity.x"], {"lower": 5.0, "upper": -5.0}), "variables.x0.velocity.x")
edit("range_variable_start_outside", PROJ, setp(["variables", "x0.velocity.x"], {"lower": 3.0, "upper": 5.0}), "variables.x0.velocity.x")
edit("range_sweep_wrong_length", PROJ, setp("batch.sweep", {"x0.velocity.y": [1.0]}), "batch.sweep.x0.velocity.y")
edit("range_randomize_low_above_high", PROJ, setp("batch.randomize", {"x0.velocity.y": [2.0, 1.0]}), "batch.randomize.x0.velocity.y")
edit("range_randomize_relative_one", PROJ, setp("batch.randomize", {"theta.mass": {"relative": 1.0}}), "batch.randomize.theta.mass.relative")
edit("range_checkpoint_every_word", PROJ, setp("simulation.checkpoint_every", "cube"), "simulation.checkpoint_every")

# ---- choices ----
edit("choice_precision", PROJ, setp("simulation.precision", "float16"), "simulation.precision")
edit("choice_backend", PROJ, setp("simulation.backend", "tpu"), "simulation.backend")
edit("choice_model_type", PROJ, setp("model.type", "fluid"), "model.type")
edit("choice_optimizer", PROJ, setp("optimizer.method", "sgd"), "optimizer.method")
edit("choice_schedule", PROJ, setp("optimizer.learning_rate_schedule", "step"), "optimizer.learning_rate_schedule")
edit("choice_horizon_measure", PROJ, setp("validation.horizon_measure", "energy"), "validation.horizon_measure")
edit("choice_ground_type", PROJ, setp("model.ground.type", "trampoline"), "model.ground.type")
edit("choice_long_value", PROJ, setp("simulation.precision", "f" * 5000), "simulation.precision")

# ---- unknown keys ----
U = [
    ("unknown_top", "simulaton", {"dt": 0.01}, "simulaton"),
    ("unknown_simulation", "simulation.dtt", 0.01, "simulation.dtt"),
    ("unknown_model", "model.gravty", 9.81, "model.gravty"),
    ("unknown_ground", "model.ground.stifness", 1.0, "model.ground.stifness"),
    ("unknown_batch", "batch.sizes", 2, "batch.sizes"),
    ("unknown_optimizer", "optimizer.lr", 0.1, "optimizer.lr"),
    ("unknown_validation", "validation.enable", True, "validation.enable"),
    ("unknown_output", "output.folder", "runs", "output.folder"),
    ("unknown_initial_state", "initial_state.pos", [0.0, 0.0], "initial_state.pos"),
    ("unknown_controls", "controls.init", [0.0, 0.0], "controls.init"),
    ("unknown_variable_key", ["variables", "x0.velocity.x", "lowr"], -1.0, "variables.x0.velocity.x.lowr"),
    ("unknown_compare", "compare", {"itrations": 3}, "compare.itrations"),
    ("unknown_perturb", "perturb", {"parameter": "theta.drag", "relativ": [0.1]}, "perturb.relativ"),
    ("unknown_horizon_sweep", "horizon_sweep", {"steps": [10], "step": [10]}, "horizon_sweep.step"),
    ("unknown_long_key", "k" * 3000, 1, "kkkkkkkkkk"),
]
for name, path, value, key in U:
    edit(name, PROJ, setp(path, value), key)
edit("unknown_terminal_key", PROJ, setp("loss.terminal", [{"state": "position.x", "target": 1.0, "weigth": 1.0}]), "loss.terminal[0].weigth")
edit("unknown_state_name", PROJ, setp("loss.terminal", [{"state": "position.w", "target": 1.0}]), "loss.terminal[0].state")
edit("unknown_slot", PROJ, setp(["variables", "x0.velocity.q"], {}), "variables.x0.velocity.q")
edit("unknown_control", PROJ, setp(["variables", "controls.thrust"], {}), "variables.controls.thrust")
edit("unknown_long_slot", PROJ, setp(["variables", "x0." + "v" * 4000], {}), "variables.x0.vvvv")
edit("unknown_sweep_slot", PROJ, setp("batch.sweep", {"x0.speed": [1.0, 2.0]}), "batch.sweep.x0.speed")
edit("unknown_target_param", PROJ, setp("loss.terminal", [{"state": "position.x", "target": "theta.goal"}]), "loss.terminal[0].target")

# ---- duplicate keys (JSON text: a dict cannot hold them) ----
D = [
    ("dup_name", '"name": "corpus_projectile"', '"name": "corpus_projectile", "name": "other"', "name"),
    ("dup_model", '"model": {', '"model": {"type": "projectile"}, "model": {', "model"),
    ("dup_dt", '"dt": 0.01', '"dt": 0.01, "dt": 0.02', "simulation.dt"),
    ("dup_type", '"type": "projectile"', '"type": "projectile", "type": "projectile"', "model.type"),
    ("dup_ground_type", '"type": "none"', '"type": "none", "type": "none"', "model.ground.type"),
    ("dup_seed", '"seed": 3', '"seed": 3, "seed": 4', "batch.seed"),
    ("dup_state", '"state": "position.x"', '"state": "position.x", "state": "position.y"', "loss.terminal[0].state"),
    ("dup_variable", '"x0.velocity.x": {', '"x0.velocity.x": {}, "x0.velocity.x": {', "variables.x0.velocity.x"),
    ("dup_lower", '"lower": -10.0', '"lower": -10.0, "lower": -20.0', "variables.x0.velocity.x.lower"),
    ("dup_method", '"method": "gd"', '"method": "gd", "method": "adam"', "optimizer.method"),
    ("dup_enabled", '"enabled": true', '"enabled": true, "enabled": false', "validation.enabled"),
    ("dup_stride", '"trajectory_stride": 1', '"trajectory_stride": 1, "trajectory_stride": 2', "output.trajectory_stride"),
    ("dup_simulation_section", '"simulation": {', '"simulation": {"dt": 1}, "simulation": {', "simulation"),
    ("dup_in_description_object", '"name": "corpus_projectile"', '"name": "corpus_projectile", "description": {"a": 1, "a": 2}', "description.a"),
    ("dup_empty_key", '"name": "corpus_projectile"', '"name": "corpus_projectile", "": 1, "": 2', "duplicate key"),
]
compact = json.dumps(PROJ)
for name, a, b, key in D:
    assert a in compact, a
    raw(name, compact.replace(a, b, 1), key)

# ---- includes ----
cases.append(("inc_not_object.frag", "[1, 2, 3]", None))
cases.append(("inc_bad_json.frag", '{"gravity": 9.81,', None))
cases.append(("inc_duplicate.frag", '{"gravity": 9.81, "gravity": 1.0, "bodies": []}', None))
cases.append(("inc_nested.frag", json.dumps({"include": "inc_not_object.frag", "gravity": 9.81}), None))
cases.append(("inc_deep.frag", '{"bodies": ' + nest(80, kind="array") + "}", None))
cases.append(("inc_empty.frag", "", None))
INC = "model.include"
edit("include_into_projectile", PROJ, setp("model.include", PANDA_ARM), INC)
edit("include_into_mass_spring", MS, setp("model.include", PANDA_ARM), INC)
edit("include_missing_file", ART, setp("model.include", "no_such_fragment.json"), INC)
edit("include_directory", ART, setp("model.include", "."), INC)
edit("include_empty_name", ART, setp("model.include", ""), INC)
edit("include_number", ART, setp("model.include", 5), INC)
edit("include_array", ART, setp("model.include", [PANDA_ARM]), INC)
edit("include_self", ART, setp("model.include", "include_self.json"), INC)
edit("include_whole_config", ART, setp("model.include", "../../../configs/panda.json"), INC)
edit("include_not_object", ART, setp("model.include", "inc_not_object.frag"), INC)
edit("include_bad_json", ART, setp("model.include", "inc_bad_json.frag"), INC)
edit("include_duplicate_key", ART, setp("model.include", "inc_duplicate.frag"), INC)
edit("include_nested", ART, setp("model.include", "inc_nested.frag"), INC)
edit("include_deep", ART, setp("model.include", "inc_deep.frag"), INC)
edit("include_empty_file", ART, setp("model.include", "inc_empty.frag"), INC)
edit("include_dev_null", ART, setp("model.include", "/dev/null"), INC)
edit("include_long_name", ART, setp("model.include", "x" * 3000 + ".json"), INC)
edit("include_nul_in_name", ART, setp("model.include", PANDA_ARM + "\u0000.bak"), INC)
edit("include_cycle_a", ART, setp("model.include", "include_cycle_b.json"), INC)
edit("include_cycle_b", ART, setp("model.include", "include_cycle_a.json"), INC)

# ---- names (the run folder's name) ----
N = [
    ("name_slash", "a/b"),
    ("name_dotdot", "../escape"),
    ("name_space", "my run"),
    ("name_empty", ""),
    ("name_101_chars", "n" * 101),
    ("name_3000_chars", "n" * 3000),
    ("name_unicode", "café"),
    ("name_newline", "line\nbreak"),
    ("name_escape_sequence", "\u001b[31mred"),
    ("name_nul", "a\u0000b"),
    ("name_backslash", "a\\b"),
    ("name_star", "run*"),
]
for name, value in N:
    edit(name, PROJ, setp("name", value), "name")

# ---- memory: the whole need against simulation.memory_limit_gb ----
edit("memory_batch_times_steps", PROJ,
     lambda j: (setp("batch.size", 1 << 24)(j), setp("simulation.steps", 100000000)(j)), "simulation.steps")
edit("memory_tiny_limit", PROJ, setp("simulation.memory_limit_gb", 1e-9), "simulation.steps")
edit("memory_trajectory_45gb", PROJ,
     lambda j: (setp("batch.size", 170)(j), setp("simulation.steps", 1000000)(j),
                setp("output.trajectory_rollouts", 170)(j), setp("validation.enabled", False)(j),
                setp("optimizer.method", "none")(j), delp("optimizer.learning_rate")(j), delp("optimizer.iterations")(j),
                setp("simulation.memory_limit_gb", 40)(j)),
     "output.trajectory_rollouts")
edit("memory_trajectory_default_limit", PROJ,
     lambda j: (setp("batch.size", 1000)(j), setp("simulation.steps", 10000000)(j),
                setp("output.trajectory_rollouts", 1000)(j), setp("validation.enabled", False)(j),
                setp("optimizer.method", "none")(j), delp("optimizer.learning_rate")(j), delp("optimizer.iterations")(j)),
     "output.trajectory_rollouts")
edit("memory_horizon_sweep", PROJ,
     lambda j: (setp("batch.size", 1 << 20)(j), setp("horizon_sweep", {"steps": [10, 10000000]})(j),
                setp("simulation.memory_limit_gb", 64)(j)), "simulation.steps")

# ---- rules across keys ----
edit("rule_loss_no_terms", PROJ, setp("loss", {}), "loss")
edit("rule_loss_missing", PROJ, delp("loss"), "loss")
edit("rule_model_missing", PROJ, delp("model"), "model")
edit("rule_model_type_missing", PROJ, delp("model.type"), "model.type")
edit("rule_simulation_missing", PROJ, delp("simulation"), "simulation")
edit("rule_dt_missing", PROJ, delp("simulation.dt"), "simulation.dt")
edit("rule_variable_named_twice", PROJ,
     lambda j: (setp("variables.controls", {})(j), j["variables"].update({"controls.force.x": {}})), "variables.controls")
edit("rule_hold_on_state", PROJ, setp(["variables", "x0.velocity.x"], {"lower": -10, "upper": 10, "hold": 2}), "variables.x0.velocity.x.hold")
edit("rule_iterations_without_method", PROJ,
     lambda j: (setp("optimizer", {"method": "none", "iterations": 5})(j)), "optimizer.iterations")
edit("rule_gd_without_variables", PROJ, lambda j: (delp("variables")(j), setp("validation.enabled", False)(j)), "optimizer.method")
edit("rule_validation_without_variables", PROJ,
     lambda j: (delp("variables")(j), setp("optimizer", {"method": "none"})(j)), "validation.enabled")
edit("rule_cmaes_batch", PROJ, setp("optimizer", {"method": "cmaes", "iterations": 2}), "batch.size")
edit("rule_schedule_final_missing", PROJ, setp("optimizer.learning_rate_schedule", "cosine"), "optimizer.learning_rate_final")
edit("rule_final_with_constant", PROJ, setp("optimizer.learning_rate_final", 0.01), "optimizer.learning_rate_final")
edit("rule_success_without_terminal", PROJ,
     lambda j: (setp("loss", {"control_effort": 1.0})(j), setp("success_tolerance", 0.1)(j)), "success_tolerance")
edit("rule_perturb_variable", PROJ,
     lambda j: (setp(["variables", "theta.drag"], {"lower": 0, "upper": 1})(j), setp("perturb", {"parameter": "theta.drag"})(j)),
     "perturb.parameter")
edit("rule_perturb_state", PROJ, setp("perturb", {"parameter": "x0.velocity.x"}), "perturb.parameter")
edit("rule_compare_unbounded", PROJ, lambda j: (setp("variables", {"controls": {}})(j), setp("compare", {})(j)),
     "variables.controls.force.x")
edit("rule_horizon_sweep_empty", PROJ, setp("horizon_sweep", {"steps": []}), "horizon_sweep.steps")
edit("rule_horizon_sweep_fraction", PROJ, setp("horizon_sweep", {"steps": [10.5]}), "horizon_sweep.steps")
edit("rule_normalized_unbounded", PROJ,
     lambda j: (setp("variables", {"controls": {}})(j), setp("optimizer.normalized", True)(j)), "optimizer.normalized")
edit("rule_landing_on_mass_spring", MS, setp("loss.landing", {"target": [1.0]}), "loss.landing")
edit("rule_penetration_on_projectile", PROJ, setp("validation.penetration_bound", 0.01), "validation.penetration_bound")
edit("rule_horizon_measure_controls_none", MS, setp("validation.horizon_measure", "controls"), "validation.horizon_measure")

# ---- model sections ----
edit("ms_robot_missing", MS, delp("model.robot"), "model.robot")
edit("ms_spring_index", MS, setp("model.robot.springs", [[0, 9, 0.1, 14000, 0.1]]), "model.robot.springs[0]")
edit("ms_spring_self", MS, setp("model.robot.springs", [[1, 1, 0.1, 14000, 0.1]]), "model.robot.springs[0]")
edit("ms_spring_short", MS, setp("model.robot.springs", [[0, 1, 0.1]]), "model.robot.springs[0]")
edit("ms_rest_length_zero", MS, setp("model.robot.springs", [[0, 1, 0.0, 14000, 0.1]]), "model.robot.springs[0]")
edit("ms_particles_one", MS, setp("model.robot.particles", [[0.2, 0.1]]), "model.robot.particles")
edit("ms_grid_and_particles", MS, setp("model.robot.grid", {"cells": [[0, 0]]}), "model.robot")
edit("ms_grid_cell_duplicate", MS, lambda j: setp("model.robot", {"grid": {"cells": [[0, 0], [0, 0]]}})(j), "model.robot.grid.cells")
edit("ms_grid_cell_negative", MS, lambda j: setp("model.robot", {"grid": {"cells": [[-1, 0]]}})(j), "model.robot.grid.cells")
edit("ms_actuation_phases_zero", MS, setp("model.actuation", {"phases": 0}), "model.actuation.phases")
edit("ms_restitution_two", MS, setp("model.ground", {"type": "impact", "restitution": 2.0}), "model.ground.restitution")
edit("ms_friction_negative", MS, setp("model.ground.friction", -1.0), "model.ground.friction")
edit("ms_morphology_word", MS, setp("model.morphology", "bones"), "model.morphology")
edit("art_bodies_empty", ART, lambda j: (delp("model.include")(j), setp("model.bodies", [])(j)), "model.bodies")
edit("art_bodies_missing", ART, delp("model.include"), "model.bodies")
edit("art_integrator", ART, setp("model.integrator", "verlet"), "model.integrator")
edit("art_q_wrong_size", ART, setp("initial_state.q", [0, 0]), "initial_state.q")
edit("art_unknown_state", ART, setp("loss.terminal", [{"state": "joint9.q", "target": 0.1}]), "loss.terminal[0].state")
# body names are echoed by the model's parser: the message cap keeps them short
edit("art_long_parent", ART, lambda j: (delp("model.include")(j), setp("model.bodies", [
    {"name": "a", "parent": "p" * 5000, "joint": {}, "mass": 1, "fullinertia": [1, 1, 1, 0, 0, 0]}])(j)),
     "model.bodies[0].parent")
edit("art_long_name_twice", ART, lambda j: (delp("model.include")(j), setp("model.bodies", [
    {"name": "b" * 5000, "joint": {}, "mass": 1, "fullinertia": [1, 1, 1, 0, 0, 0]},
    {"name": "b" * 5000, "parent": "b" * 5000, "joint": {}, "mass": 1, "fullinertia": [1, 1, 1, 0, 0, 0]}])(j)),
     "model.bodies[1].name")
edit("art_newton_iterations", ART, setp("model.torque_limits", {"newton_iterations": 9}), "model.torque_limits")

# ---- physical validity (src/models/articulated/inertia_check.h and the model parsers) ----
ARM1 = {
    "name": "corpus_arm",
    "model": {"type": "articulated", "integrator": "euler",
              "bodies": [{"name": "a", "joint": {}, "mass": 1.0, "fullinertia": [1, 1, 1, 0, 0, 0]},
                         {"name": "b", "parent": "a", "pos": [0, 0, 0.5], "joint": {}, "mass": 1.0,
                          "fullinertia": [0.1, 0.1, 0.1, 0, 0, 0]}]},
    "simulation": {"dt": 0.002, "steps": 20},
    "loss": {"control_effort": 1.0},
    "variables": {"controls": {"lower": -1, "upper": 1}},
    "optimizer": {"method": "none"},
    "validation": {"at": ["initial"], "max_rollouts": 1},
    "output": {"trajectory_rollouts": 1},
}
PHYS = [
    ("phys_inertia_negative_diagonal", [1, 1, -0.5, 0, 0, 0]),
    ("phys_inertia_zero", [0, 0, 0, 0, 0, 0]),
    ("phys_inertia_triangle", [1, 1, 3, 0, 0, 0]),
    ("phys_inertia_indefinite_offdiagonal", [1, 1, 1, 2, 0, 0]),
    ("phys_inertia_singular_offdiagonal", [1, 1, 2, 1, 0, 0]),
    ("phys_inertia_nan_like_huge", [1e300, 1, 1, 0, 0, 0]),
]
for name, inertia in PHYS:
    edit(name, ARM1, lambda j, v=inertia: j["model"]["bodies"][1].update({"fullinertia": v}), "model.bodies[1].fullinertia")
edit("phys_mass_negative", ARM1, lambda j: j["model"]["bodies"][1].update({"mass": -1.0}), "model.bodies[1].mass")
edit("phys_mass_zero", ARM1, lambda j: j["model"]["bodies"][0].update({"mass": 0.0}), "model.bodies[0].mass")
edit("phys_inertia_short", ARM1, lambda j: j["model"]["bodies"][0].update({"fullinertia": [1, 1, 1]}), "model.bodies[0].fullinertia")
edit("phys_draw_leaves_triangle", ARM1,
     lambda j: (j["model"]["bodies"][1].update({"fullinertia": [1, 1, 1.9, 0, 0, 0]}),
                j.update({"batch": {"size": 4, "randomize": {"theta.inertia.diagonal": {"relative": 0.9}}}})),
     "batch.randomize.theta.inertia.diagonal")

edit("phys_rest_positions_coincide", MS,
     lambda j: (j["model"].update({"morphology": "rest_positions"}),
                j["model"]["robot"].update({"particles": [[0.2, 0.1], [0.2, 0.1], [0.2, 0.2], [0.3, 0.2]]})),
     "model.robot.particles")

# found by the config fuzzer: a window without its length was read as 0 steps and divided by
edit("window_steps_missing", MS,
     lambda j: j.update({"optimizer": {"method": "adam", "learning_rate": 0.01, "iterations": 2, "window": {}}}),
     "optimizer.window.steps")

# the genetic algorithm (optimizer.method ga, compare.ga_*) and the centre-of-mass target
PROJ1 = copy.deepcopy(PROJ)
PROJ1["batch"] = {"size": 1, "seed": 3}
edit("rule_ga_batch", PROJ, setp("optimizer", {"method": "ga", "iterations": 2}), "batch.size")
edit("rule_ga_population", PROJ1, setp("optimizer", {"method": "ga", "iterations": 2, "population": 2}),
     "optimizer.population")
edit("rule_compare_ga_population", PROJ1, setp("compare", {"ga_rollouts": 100, "ga_population": 2}),
     "compare.ga_population")
edit("rule_compare_ga_without_budget", PROJ1, setp("compare", {"ga_sigma0": 0.1}), "compare.ga_rollouts")
edit("rule_com_target_axis", PROJ, setp("loss", {"com_target": {"target": [1.0, 0.5, 0.0]}}), "loss.com_target.target")

# FEM contact: the hard law's damping rule, obstacles, the 5-tetrahedron cut's phase
FEM = {
    "name": "corpus_fem",
    "model": {"type": "fem", "mesh": {"grid": {"cells": [1, 1, 1], "cell_size": 0.1}},
              "material": {"young": 1e5, "poisson": 0.3}, "ground": {"type": "penalty"}},
    "simulation": {"dt": 0.001, "steps": 10},
    "initial_state": {"offset": [0.0, 0.01, 0.0]},
    "loss": {"com_target": {"target": [0.05, 0.0, 0.05], "weight": 2.0}},
    "variables": {"theta.element.young": {"lower": 1e4, "upper": 1e6}},
    "optimizer": {"method": "adam", "learning_rate": 0.01, "iterations": 2},
    "validation": {"at": ["initial"]},
    "output": {"trajectory_rollouts": 1},
}
edit("fem_approach_with_softplus", FEM, setp("model.ground.damping_law", "approach"), "model.ground.damping_law")
edit("fem_obstacle_normal_zero", FEM, setp("model.obstacles", [{"type": "plane", "normal": [0, 0, 0]}]),
     "model.obstacles[0].normal")
edit("fem_obstacle_kind", FEM, setp("model.obstacles", [{"type": "sphere"}]), "model.obstacles[0].type")
edit("fem_obstacles_implicit", FEM,
     lambda j: (setp("model.integrator", "backward_euler")(j),
                setp("model.obstacles", [{"type": "box", "center": [0.3, 0, 0]}])(j)), "model.obstacles")
edit("fem_vertex_mass_implicit", FEM,
     lambda j: (setp("model.integrator", "backward_euler")(j), setp("model.vertex_mass", 0.01)(j)), "model.vertex_mass")
edit("fem_cut_phase_six", FEM,
     lambda j: j["model"]["mesh"]["grid"].update({"tets_per_cell": 6, "cut_phase": 1}), "model.mesh.grid.cut_phase")


def main():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        if f.endswith(".json") or f.endswith(".frag") or f == "manifest.tsv":
            os.remove(os.path.join(OUT, f))
    names = set()
    with open(os.path.join(OUT, "manifest.tsv"), "w", encoding="utf-8") as man:
        man.write("# file\texpected text on stderr (steer run exits 2 and writes nothing); written by tests/config/reader_corpus_gen.py\n")
        for name, text, key in cases:
            assert name not in names, name
            names.add(name)
            with open(os.path.join(OUT, name), "w", encoding="utf-8", newline="") as f:
                f.write(text)
            if key is not None:
                man.write(name + "\t" + key + "\n")
    n = sum(1 for c in cases if c[2] is not None)
    print("reader_corpus_gen: %d configs and %d include fragments in %s" % (n, len(cases) - n, OUT))


if __name__ == "__main__":
    sys.exit(main())
