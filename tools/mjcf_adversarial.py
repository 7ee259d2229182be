#!/usr/bin/env python3
"""Adversarial robot files for steer's MJCF/URDF import (docs/robustness.md, "Adversarial robot
files"): a corpus that each must be refused with exit 2 naming the element, or load and run
correctly; and a mutation fuzzer over the repository's own robot files. Standard library only.

  mjcf_adversarial.py --write DIR
      writes the corpus into DIR (made, or emptied of an earlier corpus) with manifest.json: per
      file what is adversarial and the expected outcome. Deterministic: the same bytes each time.

  mjcf_adversarial.py --check --steer PATH --out DIR [--timeout S] [--only NAME ...]
      writes the corpus into DIR/corpus, runs `steer run` on a one-step config importing each
      file (DIR/configs, artifacts into DIR/runs/<file>), and classifies the outcome:
        loads    exit 0, an artifact written, every parameter and the state after the step
                 finite, masses positive, and the values the case names as imported;
        refused  exit 2, the message's first line at model.mjcf (model.urdf) naming what the case
                 expects (the element), no artifact written;
        error    anything else: a signal, a hang (--timeout), another exit code, a refusal at
                 another key or without the expected words, an oversized message.
      A case expects "loads", "refused" or "either" (both are right, for the reason it gives).
      Cases marked xfail are known steer defects: their outcome is printed as XFAIL and does not
      fail the check; one that now meets its expectation is XPASS and fails it (remove the mark).
      Prints the table (file | what | outcome | first line of the message); --markdown and
      --json write it.

  mjcf_adversarial.py --fuzz N --seed S --steer PATH --out DIR [--seeds FILE ...]
      N mutants of the seed files (default configs/mjcf/*.xml and *.urdf): numbers flipped to
      extreme values, attributes and elements deleted or duplicated, files truncated or spliced,
      one to three mutations each, from a seeded draw (the same N and S give the same files,
      kept under DIR/fuzz). Each must not crash or hang, and exit 0 (an artifact written) or 2
      with a message at model.mjcf (model.urdf); refusals of a known defect's kind are counted,
      not failed.

Exit status: 0 passed, 1 failed (what failed is printed), 2 a usage error, 77 skipped (steer
built without the MJCF import: `steer --version` says "MuJoCo import: off").
"""
import argparse
import json
import math
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKIP = 77
MANIFEST = "manifest.json"
OUTPUT_CAP = 16384  # bytes of stdout + stderr a run may print (a message quoting a huge file is a defect)


def usage_error(message):
    print(f"mjcf_adversarial.py: {message}", file=sys.stderr)
    sys.exit(2)


class Skip(Exception):
    """The check cannot run here (not a failure): exit 77 with the reason."""


class Failure(Exception):
    """The check could not run as asked (a broken input): exit 1."""


# ---------------------------------------------------------------- building MJCF


def attrs(d):
    return "".join(f' {k}="{v}"' for k, v in d.items() if v is not None)


def merged(base, over):
    out = dict(base)
    out.update(over or {})
    return out


OPTION = {"timestep": "0.002", "integrator": "Euler", "gravity": "0 0 -9.81"}
BODY1 = {"name": "link1", "pos": "0 0 1"}
JOINT1 = {"name": "hinge1", "type": "hinge", "axis": "0 1 0"}
INERTIAL1 = {"pos": "0 0 -0.1", "mass": "1", "diaginertia": "0.01 0.01 0.002"}
BODY2 = {"name": "link2", "pos": "0 0 -0.2"}
JOINT2 = {"name": "hinge2", "type": "hinge", "axis": "0 1 0"}
INERTIAL2 = {"pos": "0 0 -0.1", "mass": "0.5", "diaginertia": "0.005 0.005 0.001"}
MOTOR1 = {"name": "motor1", "joint": "hinge1", "gear": "1"}


def arm(option=None, body1=None, joint1=None, inertial1=None, body2=None, joint2=None, inertial2=None,
        motor1=None, in_body1="", in_body2="", in_world="", sections="", head="", compiler="", model="adversarial"):
    """A two-link pendulum arm (hinges about y, one motor) with the given attributes replaced
    (a value None removes one) and extra elements in body1, body2, the world body, after the
    world body (sections) or before it (head)."""
    motor = f'  <actuator>\n    <motor{attrs(merged(MOTOR1, motor1))}/>\n  </actuator>\n' if motor1 != "none" else ""
    return (f'<mujoco model="{model}">\n'
            f'{compiler}'
            f'  <option{attrs(merged(OPTION, option))}/>\n'
            f'{head}'
            f'  <worldbody>\n'
            f'{in_world}'
            f'    <body{attrs(merged(BODY1, body1))}>\n'
            f'      <joint{attrs(merged(JOINT1, joint1))}/>\n'
            f'      <inertial{attrs(merged(INERTIAL1, inertial1))}/>\n'
            f'{in_body1}'
            f'      <body{attrs(merged(BODY2, body2))}>\n'
            f'        <joint{attrs(merged(JOINT2, joint2))}/>\n'
            f'        <inertial{attrs(merged(INERTIAL2, inertial2))}/>\n'
            f'{in_body2}'
            f'      </body>\n'
            f'    </body>\n'
            f'  </worldbody>\n'
            f'{motor}'
            f'{sections}'
            f'</mujoco>\n')


def chain(n, nested, name="b"):
    """n bodies with a hinge each: nested (each the child of the one before) or side by side."""
    inner = f'<joint axis="0 1 0"/><inertial pos="0 0 -0.05" mass="0.1" diaginertia="1e-4 1e-4 1e-5"/>'
    if nested:
        body = "".join(f'<body name="{name}{i}" pos="0 0 -0.1">{inner}' for i in range(n)) + "</body>" * n
    else:
        body = "\n".join(f'<body name="{name}{i}" pos="{0.01 * i:g} 0 0">{inner}</body>' for i in range(n))
    return f'<mujoco model="chain{n}">\n<worldbody>\n{body}\n</worldbody>\n</mujoco>\n'


URDF_LINK = ('  <link name="{name}">\n    <inertial>\n      <origin xyz="{ixyz}" rpy="0 0 0"/>\n      <mass value="{mass}"/>\n'
             '      <inertia ixx="{ixx}" ixy="0" ixz="0" iyy="{iyy}" iyz="0" izz="{izz}"/>\n    </inertial>\n  </link>\n')
URDF_JOINT = ('  <joint name="{name}" type="{type}">\n    <parent link="{parent}"/>\n    <child link="{child}"/>\n'
              '    <origin xyz="{xyz}" rpy="0 0 0"/>\n    <axis xyz="{axis}"/>\n{limit}  </joint>\n')


def urdf(link1=None, joint1=None, extra="", robot="adversarial"):
    """A base link and one link on a revolute joint (about y), with values replaced."""
    l0 = dict(name="base", ixyz="0 0 0", mass="2", ixx="0.01", iyy="0.01", izz="0.01")
    l1 = merged(dict(name="link1", ixyz="0 0 -0.1", mass="1", ixx="0.01", iyy="0.01", izz="0.002"), link1)
    j1 = merged(dict(name="joint1", type="revolute", parent="base", child="link1", xyz="0 0 0.5", axis="0 1 0",
                     limit='    <limit lower="-1" upper="1" effort="10" velocity="5"/>\n'), joint1)
    return (f'<?xml version="1.0"?>\n<robot name="{robot}">\n' + URDF_LINK.format(**l0) + URDF_LINK.format(**l1)
            + URDF_JOINT.format(**j1) + extra + '</robot>\n')


# ---------------------------------------------------------------- the corpus


@dataclass(frozen=True)
class Case:
    name: str  # the file's name in the corpus
    what: str  # what is adversarial, one line
    expect: str  # "loads", "refused" or "either"
    content: object = None  # str or bytes; None for a special file (special)
    words: tuple = ()  # refused: each must appear in the message (case-insensitive)
    why: str = ""  # either: why loading and refusing are both right
    params: tuple = ()  # loads: ((parameter, value), ...) the artifact must hold (relative 1e-9)
    xfail: str = ""  # a known steer defect: what goes wrong
    timeout: float = 0.0  # seconds; 0: --timeout
    special: str = ""  # "fifo", "dir", "missing", or an absolute path the config names instead of the file
    memory_mb: int = 0  # the run's address-space limit; 0: --memory-mb
    companions: tuple = ()  # ((file name, content), ...) written beside it (includes)

    @property
    def key(self):
        return "urdf" if self.name.endswith(".urdf") else "mjcf"

    def expectation(self):
        if self.expect == "refused":
            return "refused: " + ", ".join(self.words) if self.words else "refused"
        if self.expect == "either":
            return f"either ({self.why})"
        return "loads"


NONFINITE = (("nan", "nan"), ("inf", "inf"), ("neginf", "-inf"), ("huge", "1e400"))

# a known steer defect's kind of refusal the fuzzer counts (fuzz_verdict)
MAPPED_KEY = ("refused at the key of steer's mapped model (model.bodies[i]..., model.gravity, model.keyframes[i]...) "
              "instead of at model.mjcf naming the element: the import passes the compiled value on unchecked")

def nonfinite_cases():
    """Each non-finite value in each numeric attribute that maps onto steer's model."""
    out = []
    # (slot, the arm() keyword, attribute, a value template with X for the bad number, the element)
    slots = (
        ("body_pos", "body1", "pos", "X 0 1", "link1"),
        ("body_quat", "body1", "quat", "1 X 0 0", "link1"),
        ("inertial_pos", "inertial1", "pos", "0 0 X", "link1"),
        ("mass", "inertial1", "mass", "X", "link1"),
        ("diaginertia", "inertial1", "diaginertia", "0.01 X 0.002", "link1"),
        ("axis", "joint1", "axis", "0 X 0", "hinge1"),
        ("joint_pos", "joint1", "pos", "0 0 X", "hinge1"),
        ("range", "joint1", "range", "-1 X", "hinge1"),
        ("damping", "joint1", "damping", "X", "hinge1"),
        ("armature", "joint1", "armature", "X", "hinge1"),
        ("stiffness", "joint1", "stiffness", "X", "hinge1"),
        ("ref", "joint1", "ref", "X", "hinge1"),
        ("gear", "motor1", "gear", "X", "motor1"),
        ("timestep", "option", "timestep", "X", "timestep"),
        ("gravity", "option", "gravity", "0 0 X", "gravity"),
    )
    for slot, kw, attr, template, element in slots:
        for tag, value in NONFINITE:
            over = {attr: template.replace("X", value)}
            if attr == "range":
                over["limited"] = "true"
            # MuJoCo's parser refuses 1e400 naming the attribute and the element's kind and line
            words = (f"attribute '{attr}'",) if tag == "huge" else (element,)
            out.append(Case(f"nonfinite_{slot}_{tag}.xml", f"{attr}=\"{over[attr]}\" on {element}", "refused",
                            arm(**{kw: over}), words=words))
    return out


def physics_cases():
    c = []
    add = c.append
    # masses and inertias
    add(Case("mass_zero.xml", "inertial mass 0 on a moving body", "refused", arm(inertial1={"mass": "0"}),
             words=("link1",)))
    add(Case("mass_negative.xml", "inertial mass -1", "refused", arm(inertial1={"mass": "-1"}), words=("link1",)))
    add(Case("mass_tiny.xml", "inertial mass 1e-300 (positive, below MuJoCo's mjMINVAL)", "refused",
             arm(inertial1={"mass": "1e-300"}), words=("link1",)))
    add(Case("inertia_zero.xml", "diaginertia 0 0 0 with mass 1", "refused", arm(inertial1={"diaginertia": "0 0 0"}),
             words=("link1",)))
    add(Case("inertia_negative.xml", "diaginertia with a negative moment", "refused",
             arm(inertial1={"diaginertia": "0.01 -0.01 0.002"}), words=("link1",)))
    add(Case("inertia_triangle.xml", "diaginertia 0.01 0.01 0.05: A + B < C", "refused",
             arm(inertial1={"diaginertia": "0.01 0.01 0.05"}), words=("link1",)))
    add(Case("fullinertia_indefinite.xml", "fullinertia with products larger than the moments (not positive definite)",
             "refused", arm(inertial1={"diaginertia": None, "fullinertia": "0.01 0.01 0.01 0.05 0 0"}),
             words=("link1",)))
    add(Case("fullinertia_triangle.xml", "fullinertia whose principal moments violate the triangle inequality",
             "refused", arm(inertial1={"diaginertia": None, "fullinertia": "0.001 0.001 0.05 0 0 0"}),
             words=("link1",)))
    add(Case("inertia_balanced.xml", "the triangle violated, with compiler balanceinertia (MuJoCo repairs it)",
             "loads", arm(inertial1={"diaginertia": "0.01 0.01 0.05"}, compiler='  <compiler balanceinertia="true"/>\n'),
             params=(("link1.mass", 1.0),)))
    add(Case("inertia_lamina.xml", "diaginertia 0.01 0.01 0.02: A + B = C exactly (a lamina, valid)", "loads",
             arm(inertial1={"diaginertia": "0.01 0.01 0.02"}), params=(("link1.inertia.zz", 0.02),)))
    add(Case("geom_mass_nan.xml", "a geom's mass=\"nan\" (MuJoCo's 'unset': the mass comes from density)", "loads",
             arm(inertial1={}, in_body1='      <geom type="sphere" size="0.1" mass="nan" contype="0" conaffinity="0"/>\n')
             .replace('      <inertial pos="0 0 -0.1" mass="1" diaginertia="0.01 0.01 0.002"/>\n', ''),
             params=(("link1.mass", 1000 * 4 / 3 * math.pi * 0.1 ** 3),)))
    add(Case("geom_mass_negative.xml", "the only geom has mass -1 (inertia from geoms)", "refused",
             arm(in_body1='      <geom name="bad_geom" type="sphere" size="0.1" mass="-1"/>\n')
             .replace('      <inertial pos="0 0 -0.1" mass="1" diaginertia="0.01 0.01 0.002"/>\n', ''),
             words=("bad_geom",)))
    add(Case("geom_density_zero.xml", "inertia from a geom of density 0 (a massless moving body)", "refused",
             arm(in_body1='      <geom type="sphere" size="0.1" density="0" contype="0" conaffinity="0"/>\n')
             .replace('      <inertial pos="0 0 -0.1" mass="1" diaginertia="0.01 0.01 0.002"/>\n', ''),
             words=("link1",)))
    add(Case("massless_leaf.xml", "a moving leaf body with neither inertial nor geoms", "refused",
             arm(in_body2='        <body name="ghost" pos="0 0 -0.2"><joint name="ghost_hinge" axis="1 0 0"/></body>\n'),
             words=("ghost",)))
    add(Case("massless_welded.xml", "a massless body without joints welded to a moving one (MuJoCo compiles it)",
             "either", arm(in_body2='        <body name="tag" pos="0 0 -0.2"/>\n'), words=("tag",),
             why="it adds no mass to link2: loaded, or refused naming the body"))
    add(Case("settotalmass_zero.xml", "compiler settotalmass=\"0\"", "either",
             arm(compiler='  <compiler settotalmass="0"/>\n'), words=("link1",),
             why="MuJoCo ignores a total mass <= 0 (the file's masses stand) or refuses the massless bodies"))
    # joints
    add(Case("axis_zero.xml", "joint axis 0 0 0", "refused", arm(joint1={"axis": "0 0 0"}), words=("hinge1",)))
    add(Case("axis_tiny.xml", "joint axis 1e-20 0 0 (normalized by MuJoCo? too small)", "either",
             arm(joint1={"axis": "1e-20 0 0"}), words=("hinge1",),
             why="MuJoCo refuses an axis below mjMINVAL; a normalized one is a valid axis"))
    add(Case("axis_unnormalized.xml", "joint axis 0 5 0 (MuJoCo normalizes it)", "loads",
             arm(joint1={"axis": "0 5 0"})))
    add(Case("axis_zero_second_joint.xml", "two hinges in one body, the second with axis 0 0 0", "refused",
             arm(in_body1='      <joint name="hinge1b" axis="0 0 0"/>\n'), words=("hinge1b",)))
    add(Case("axis_zero_slide.xml", "a slide joint with axis 0 0 0", "refused",
             arm(joint1={"type": "slide", "axis": "0 0 0"}), words=("hinge1",)))
    add(Case("range_reversed.xml", "limited joint range 1 -1 (lo > hi)", "refused",
             arm(joint1={"limited": "true", "range": "1 -1"}), words=("hinge1",)))
    add(Case("range_empty.xml", "limited joint range 0.5 0.5 (empty)", "either",
             arm(joint1={"limited": "true", "range": "0.5 0.5"}), words=("hinge1",),
             why="an empty range pins the joint: refused naming it, or loaded with the limit at 0.5"))
    add(Case("range_excludes_zero.xml", "limited range 1 2: the file's pose q = 0 lies outside it", "either",
             arm(joint1={"limited": "true", "range": "1 2"}), words=("hinge1",),
             why="steer refuses an initial q outside the range (naming it), or starts there with the limit's penalty"))
    add(Case("ctrlrange_reversed.xml", "a motor's ctrlrange 1 -1 (lo > hi)", "refused",
             arm(motor1={"ctrllimited": "true", "ctrlrange": "1 -1"}), words=("motor1",)))
    add(Case("forcerange_reversed.xml", "a motor's forcerange 5 -5 (lo > hi)", "refused",
             arm(motor1={"forcelimited": "true", "forcerange": "5 -5"}), words=("motor1",)))
    add(Case("gear_zero.xml", "a motor with gear 0 (drives nothing)", "either", arm(motor1={"gear": "0"}),
             words=("motor1",), why="a zero gear maps to no torque: refused naming the actuator, or loaded"))
    add(Case("damping_negative.xml", "joint damping -1 (MuJoCo compiles it; physically invalid)", "refused",
             arm(joint1={"damping": "-1"}), words=("hinge1",)))
    add(Case("armature_negative.xml", "joint armature -1 (MuJoCo compiles it; physically invalid)", "refused",
             arm(joint1={"armature": "-1"}), words=("hinge1",)))
    add(Case("damping_over_range.xml", "joint damping 1e7 (finite; beyond steer's accepted range)", "refused",
             arm(joint1={"damping": "1e7"}), words=("hinge1",)))
    add(Case("mass_over_range.xml", "inertial mass 1e300 (finite; beyond steer's accepted range)", "refused",
             arm(inertial1={"mass": "1e300", "diaginertia": "1e298 1e298 1e298"}), words=("link1",)))
    add(Case("stiffness_negative.xml", "joint stiffness -100 (MuJoCo compiles it; a repelling spring)", "either",
             arm(joint1={"stiffness": "-100"}), words=("hinge1",),
             why="a negative spring is unstable but defined: refused naming the joint, or run as the file says"))
    add(Case("kp_negative.xml", "a position servo with kp -10 (MuJoCo compiles it)", "either",
             arm(motor1="none", sections='  <actuator>\n    <position name="servo1" joint="hinge1" kp="-10"/>\n  </actuator>\n'),
             words=("servo1",), why="a negative gain is defined (it repels): refused naming the actuator, or run"))
    add(Case("timestep_zero.xml", "option timestep 0", "refused", arm(option={"timestep": "0"}), words=("timestep",)))
    add(Case("timestep_negative.xml", "option timestep -0.002", "refused", arm(option={"timestep": "-0.002"}),
             words=("timestep",)))
    add(Case("timestep_denormal.xml", "option timestep 1e-310 (subnormal, positive)", "either",
             arm(option={"timestep": "1e-310"}), words=("timestep",),
             why="a positive step, however small, is valid for one step; or refused naming it"))
    add(Case("timestep_over_range.xml", "option timestep 100 (finite; beyond simulation.dt's range (0, 10])",
             "refused", arm(option={"timestep": "100"}), words=("timestep",)))
    add(Case("timestep_1e308.xml", "option timestep 1e308 (finite; the step overflows)", "refused",
             arm(option={"timestep": "1e308"}), words=("timestep",)))
    add(Case("gravity_huge.xml", "option gravity 0 0 -1e300", "refused", arm(option={"gravity": "0 0 -1e300"}),
             words=("gravity",)))
    add(Case("capsule_zero_length.xml", "a collidable capsule of length 0 over a floor (its caps coincide)", "either",
             arm(in_world='    <geom name="floor" type="plane" size="5 5 0.1"/>\n',
                 in_body2='        <geom name="tip_capsule" type="capsule" fromto="0 0 -0.2 0 0 -0.2" size="0.02"/>\n'),
             words=("tip_capsule",), why="MuJoCo refuses a zero-length fromto; a capsule of half-length 0 is a sphere"))
    add(Case("wall_upside_down.xml", "a wall plane facing down over the arm (zaxis 0 0 -1 at z 2)", "loads",
             arm(in_world='    <geom name="ceiling" type="plane" pos="0 0 2" zaxis="0 0 -1" size="5 5 0.1"/>\n',
                 in_body2='        <geom name="tip_ball" type="sphere" pos="0 0 -0.2" size="0.03"/>\n')))
    add(Case("wall_through_the_arm.xml", "a tilted wall the arm starts 10 cm inside of", "loads",
             arm(in_world='    <geom name="wall" type="plane" pos="0.1 0 0" zaxis="-1 0 0.2" size="5 5 0.1"/>\n',
                 in_body2='        <geom name="tip_ball" type="sphere" pos="0 0 -0.2" size="0.03"/>\n')))
    add(Case("box_swallows_the_tip.xml", "a world box around the arm's tip sphere at the start", "loads",
             arm(in_world='    <geom name="block" type="box" pos="0 0 0.5" size="1 1 1"/>\n',
                 in_body2='        <geom name="tip_ball" type="sphere" pos="0 0 -0.2" size="0.03"/>\n')))
    add(Case("box_flat.xml", "a collidable box of half-size 0 along z (MuJoCo's compiler refuses it)", "refused",
             arm(in_world='    <geom name="sheet" type="box" pos="0 0 0.5" size="0.5 0.5 0"/>\n',
                 in_body2='        <geom name="limb" type="capsule" fromto="0 0 0 0 0 -0.2" size="0.02"/>\n'),
             words=("sheet",)))
    walls = "".join(f'    <geom name="wall{k}" type="plane" pos="0 0 {-1 - k}" zaxis="{k + 1} 0 1" size="5 5 0.1"/>\n'
                    for k in range(60))
    add(Case("walls_too_many.xml", "60 tilted walls against a box's 8 corners and a capsule's 2 caps (600 pairs)",
             "refused", arm(in_world=walls,
                            in_body2='        <geom name="limb" type="capsule" fromto="0 0 0 0 0 -0.2" size="0.02"/>\n'
                                     '        <geom name="crate" type="box" pos="0 0 -0.3" size="0.05 0.05 0.05"/>\n'),
             words=("contact pairs", "512")))
    add(Case("capsule_zero_radius.xml", "a collidable capsule of radius 0 over a floor", "refused",
             arm(in_world='    <geom name="floor" type="plane" size="5 5 0.1"/>\n',
                 in_body2='        <geom name="thin_capsule" type="capsule" fromto="0 0 0 0 0 -0.2" size="0"/>\n'),
             words=("thin_capsule",)))
    add(Case("sphere_negative_radius.xml", "a collidable sphere of radius -0.02 over a floor", "refused",
             arm(in_world='    <geom name="floor" type="plane" size="5 5 0.1"/>\n',
                 in_body2='        <geom name="neg_sphere" type="sphere" pos="0 0 -0.2" size="-0.02"/>\n'),
             words=("neg_sphere",)))
    add(Case("quat_zero.xml", "body quat 0 0 0 0", "refused", arm(body1={"quat": "0 0 0 0"}),
             words=("zero quaternion", "line 4")))
    add(Case("quat_unnormalized.xml", "body quat 2 0 0 0 (MuJoCo normalizes it)", "loads",
             arm(body1={"quat": "2 0 0 0"})))
    add(Case("pos_far.xml", "body pos 1e6 0 0 (finite, far away)", "either", arm(body1={"pos": "1e6 0 0"}),
             words=("link1",), why="steer bounds positions (refused naming the body) or runs it"))
    add(Case("stiff_ref_three_joints.xml", "a body with three joints, ref and springref and stiffness on each (valid)",
             "loads",
             arm(compiler='  <compiler angle="radian"/>\n', joint1={"ref": "0.2", "stiffness": "5", "springref": "0.1"},
                 in_body1=('      <joint name="hinge1x" axis="1 0 0" ref="-0.1" stiffness="3"/>\n'
                           '      <joint name="slide1z" type="slide" axis="0 0 1" ref="0.05" stiffness="50" '
                           'springref="0.02"/>\n')),
             params=(("hinge1.stiffness", 5.0), ("hinge1.springref", 0.1), ("hinge1x.stiffness", 3.0),
                     ("slide1z.stiffness", 50.0), ("slide1z.springref", 0.02))))
    add(Case("three_hinges_one_zero_axis.xml", "three hinges in one body, the middle one with axis 0 0 0", "refused",
             arm(in_body1='      <joint name="hinge1y" axis="0 0 0"/>\n      <joint name="hinge1z" axis="0 0 1"/>\n'),
             words=("hinge1y",)))
    add(Case("two_free_joints.xml", "two free joints in one body", "refused",
             arm(joint1={"type": "free", "axis": None}, in_body1='      <freejoint name="free2"/>\n'),
             words=("link1",)))
    add(Case("free_joint_nested.xml", "a free joint on a child body", "refused",
             arm(joint2={"type": "free", "axis": None}), words=("link2",)))
    add(Case("two_free_bodies.xml", "two floating bodies, each with a free joint", "loads",
             '<mujoco model="two_free">\n  <worldbody>\n'
             '    <body name="a" pos="0 0 1"><freejoint name="fa"/><inertial pos="0 0 0" mass="1" diaginertia="0.1 0.1 0.1"/></body>\n'
             '    <body name="b" pos="1 0 1"><freejoint name="fb"/><inertial pos="0 0 0" mass="1" diaginertia="0.1 0.1 0.1"/></body>\n'
             '  </worldbody>\n</mujoco>\n', words=("fb",),
             why="each free joint on a child of the world is a floating body of its own"))
    add(Case("ball_joint.xml", "a ball joint driven by a motor (a ball's controls are its torques)", "refused",
             arm(joint1={"type": "ball", "axis": None}), words=("hinge1", "ball")))
    add(Case("ball_joint_loads.xml", "a ball joint with damping, no actuator", "loads",
             arm(joint1={"type": "ball", "axis": None, "damping": "0.05"}, motor1="none"),
             params=(("hinge1.rx.damping", 0.05),)))
    balls = "".join(f'<body name="k{i}" pos="0 0 -0.1"><joint name="ball{i}" type="ball"/>'
                    f'<inertial pos="0 0 -0.05" mass="0.1" diaginertia="1e-3 1e-3 5e-4"/>' for i in range(11))
    add(Case("eleven_balls.xml", "11 ball joints nested (33 dofs: beyond the largest capacity)", "refused",
             f'<mujoco model="eleven_balls">\n<worldbody>\n{balls}{"</body>" * 11}\n</worldbody>\n</mujoco>\n',
             words=("ball joint",)))
    add(Case("ball_beside_slide.xml", "a ball joint and a slide in one body", "refused",
             arm(joint1={"type": "ball", "axis": None}, motor1="none",
                 in_body1='      <joint name="slide1b" type="slide" axis="0 0 1"/>\n'), words=("hinge1", "other joints")))
    add(Case("ball_nonunit_keyframe.xml", "a keyframe whose ball quaternion is not unit (2, 0, 0, 0)", "loads",
             arm(joint1={"type": "ball", "axis": None}, motor1="none",
                 sections='  <keyframe>\n    <key name="k" qpos="2 0 0 0 0.1"/>\n  </keyframe>\n')))
    add(Case("ball_joint_range.xml", "a ball joint with a range (a cone limit)", "refused",
             arm(joint1={"type": "ball", "axis": None, "limited": "true", "range": "0 0.5"}, motor1="none"),
             words=("hinge1", "range")))
    add(Case("frictionloss.xml", "joint frictionloss 0.1 (steer's smooth law)", "loads",
             arm(joint1={"frictionloss": "0.1"}), params=(("hinge1.frictionloss", 0.1),)))
    add(Case("frictionloss_free.xml", "frictionloss 0.1 on a free joint (not modelled)", "refused",
             '<mujoco model="free_friction">\n  <worldbody>\n'
             '    <body name="a" pos="0 0 1"><joint name="fa" type="free" frictionloss="0.1"/>'
             '<inertial pos="0 0 0" mass="1" diaginertia="0.1 0.1 0.1"/></body>\n'
             '  </worldbody>\n</mujoco>\n', words=("fa", "frictionloss")))
    add(Case("frictionloss_negative.xml", "joint frictionloss -0.1", "refused",
             arm(joint1={"frictionloss": "-0.1"}), words=("frictionloss",)))
    add(Case("integrator_implicit.xml", "option integrator implicitfast", "refused",
             arm(option={"integrator": "implicitfast"}), words=("integrator",)))
    add(Case("mocap_body.xml", "a mocap body", "refused",
             arm(in_world='    <body name="target" mocap="true" pos="0 0 2"/>\n'), words=("mocap",)))
    add(Case("gravcomp.xml", "a body with gravcomp 1", "refused", arm(body2={"gravcomp": "1"}), words=("link2", "gravcomp")))
    add(Case("contact_pair.xml", "an explicit contact pair between two geoms", "refused",
             arm(in_world='    <geom name="floor" type="plane" size="5 5 0.1" contype="0" conaffinity="0"/>\n',
                 in_body2='        <geom name="ball" type="sphere" size="0.02" contype="0" conaffinity="0"/>\n',
                 sections='  <contact>\n    <pair geom1="floor" geom2="ball"/>\n  </contact>\n'), words=("pair",)))
    add(Case("site_on_world.xml", "sites on the world body and on a link (valid)", "loads",
             arm(in_world='    <site name="world_site" pos="0.1 0.2 0.3"/>\n', in_body2='        <site name="tip" pos="0 0 -0.2"/>\n')))
    add(Case("no_joints.xml", "bodies without any joint", "refused",
             '<mujoco><worldbody><body name="rock"><inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/></body>'
             '</worldbody></mujoco>\n', words=("joint",)))
    add(Case("empty_model.xml", "<mujoco/> and nothing else", "refused", "<mujoco/>\n", words=("joint",)))
    add(Case("world_joint.xml", "a joint directly in <worldbody>", "refused",
             '<mujoco><worldbody><joint name="wj" axis="0 0 1"/></worldbody></mujoco>\n', words=("joint",)))
    add(Case("keyframe_short_qpos.xml", "a keyframe whose qpos has 1 value for 2 joints", "either",
             arm(sections='  <keyframe>\n    <key name="bad_key" qpos="0.1"/>\n  </keyframe>\n'), words=("bad_key",),
             why="MuJoCo's compiler accepts it (the values it lacks are qpos0's), or refuses it naming the key"))
    add(Case("keyframe_long_qvel.xml", "a keyframe whose qvel has 5 values for 2 joints", "refused",
             arm(sections='  <keyframe>\n    <key name="bad_key" qvel="1 2 3 4 5"/>\n  </keyframe>\n'), words=("key",)))
    add(Case("keyframe_nan.xml", "a keyframe with qpos nan", "refused",
             arm(sections='  <keyframe>\n    <key name="nan_key" qpos="nan 0"/>\n  </keyframe>\n'), words=("nan_key",)))
    add(Case("keyframe_valid.xml", "a keyframe of the right sizes (valid)", "loads",
             arm(sections='  <keyframe>\n    <key name="pose" qpos="0.3 -0.2" qvel="0 0"/>\n  </keyframe>\n')))
    return c


def reference_cases():
    c = []
    add = c.append
    add(Case("tendon_missing_site.xml", "a spatial tendon through a site that does not exist", "refused",
             arm(in_body1='      <site name="s1" pos="0 0 0"/>\n',
                 sections='  <tendon>\n    <spatial name="string"><site site="s1"/><site site="nowhere"/></spatial>\n  </tendon>\n'),
             words=("nowhere",)))
    add(Case("tendon_valid.xml", "a spatial tendon between two existing sites (straight, steer's spatial tendon)",
             "loads",
             arm(in_body1='      <site name="s1" pos="0 0 0"/>\n', in_body2='        <site name="s2" pos="0 0 -0.1"/>\n',
                 sections='  <tendon>\n    <spatial name="string"><site site="s1"/><site site="s2"/></spatial>\n  </tendon>\n')))
    add(Case("tendon_missing_joint.xml", "a fixed tendon on a joint that does not exist", "refused",
             arm(sections='  <tendon>\n    <fixed name="coupling"><joint joint="phantom" coef="1"/></fixed>\n  </tendon>\n'),
             words=("phantom",)))
    add(Case("actuator_missing_joint.xml", "a motor on a joint that does not exist", "refused",
             arm(motor1={"joint": "phantom"}), words=("phantom",)))
    add(Case("actuator_no_target.xml", "a motor with no transmission target", "refused",
             arm(motor1={"joint": None}), words=("motor1",)))
    add(Case("actuator_on_free.xml", "a motor on a free joint", "refused",
             arm(joint1={"type": "free", "axis": None}), words=("motor1",)))
    add(Case("sensor_missing_site.xml", "a touch sensor on a missing site", "refused",
             arm(sections='  <sensor>\n    <touch name="t" site="phantom_site"/>\n  </sensor>\n'), words=("phantom_site",)))
    add(Case("exclude_missing_body.xml", "a contact exclude naming a missing body", "refused",
             arm(sections='  <contact>\n    <exclude body1="link1" body2="phantom_body"/>\n  </contact>\n'),
             words=("phantom_body",)))
    add(Case("equality_missing_joint.xml", "a joint equality on a missing joint", "refused",
             arm(sections='  <equality>\n    <joint joint1="hinge1" joint2="phantom"/>\n  </equality>\n'), words=("phantom",)))
    add(Case("equality_joint.xml", "a linear joint equality hinge2 = 0.5 hinge1 (a coupling tendon)", "loads",
             arm(sections='  <equality>\n    <joint name="tie" joint1="hinge2" joint2="hinge1" polycoef="0 0.5 0 0 0"/>\n'
                          '  </equality>\n'), params=(("tie_equality.springlength", 0.0),)))
    add(Case("equality_self.xml", "a joint equality of a joint with itself", "either",
             arm(sections='  <equality>\n    <joint name="self" joint1="hinge1" joint2="hinge1"/>\n  </equality>\n'),
             words=("self",), why="the coupling q - q has no nonzero coefficient: refused naming it (or MuJoCo's compiler refuses it)"))
    add(Case("equality_nonlinear.xml", "a quadratic joint coupling", "refused",
             arm(sections='  <equality>\n    <joint name="curve" joint1="hinge2" joint2="hinge1" polycoef="0 1 0.3 0 0"/>\n'
                          '  </equality>\n'), words=("curve", "nonlinear")))
    add(Case("childclass_missing.xml", "a body's childclass names no default class", "refused",
             arm(body1={"childclass": "phantom_class"}), words=("childclass", "line 4")))
    add(Case("duplicate_body_name.xml", "two bodies named link1", "refused", arm(body2={"name": "link1"}),
             words=("link1",)))
    add(Case("duplicate_joint_name.xml", "two joints named hinge1", "refused", arm(joint2={"name": "hinge1"}),
             words=("hinge1",)))
    add(Case("duplicate_attribute.xml", "an attribute given twice on one element", "refused",
             arm().replace('name="hinge2"', 'name="hinge2" name="hinge3"'), words=("name=joint",)))
    add(Case("two_motors_one_joint.xml", "two motors on one joint, each with a ctrlrange", "refused",
             arm(motor1={"ctrllimited": "true", "ctrlrange": "-1 1"},
                 sections='  <actuator>\n    <motor name="motor1b" joint="hinge1" ctrllimited="true" ctrlrange="-2 2"/>\n  </actuator>\n'),
             words=("hinge1",)))
    add(Case("unicode_names.xml", "unicode body and joint names (ß, 関節, emoji)", "loads",
             arm(body1={"name": "körper_ß"}, joint1={"name": "関節1"}, motor1={"name": "мотор", "joint": "関節1"},
                 body2={"name": "🦾"}), params=(("körper_ß.mass", 1.0), ("🦾.mass", 0.5))))
    add(Case("unicode_refused.xml", "a limited ball joint with a unicode name: the message carries it", "refused",
             arm(joint1={"name": "шарнир", "type": "ball", "axis": None, "limited": "true", "range": "0 0.5"},
                 motor1="none"), words=("шарнир",)))
    long = "j" * 5000
    add(Case("long_name.xml", "a 5000-character joint name on a limited ball joint (the message must stay short)",
             "refused",
             arm(joint1={"name": long, "type": "ball", "axis": None, "limited": "true", "range": "0 0.5"},
                 motor1="none"), words=("jjjj", "ball"),
             xfail="the refusal is cut at about 1,500 bytes inside the joint's name: what is refused (a ball joint's "
                   "range) is lost"))
    add(Case("long_name_loads.xml", "a 5000-character body name (valid)", "loads",
             arm(body2={"name": "L" * 5000})))
    add(Case("name_with_quote_dot.xml", "names with dots, slashes and quotes (&quot;)", "either",
             arm(body1={"name": "a.b/c&quot;d"}, joint1={"name": "j.q"}, motor1={"joint": "j.q"}), words=("j.q",),
             why="steer's slot names are <name>.<field>: a dot in a name may be refused naming it"))
    add(Case("name_empty_and_space.xml", "a body named with a space and a joint named ' '", "either",
             arm(body1={"name": "link one"}, joint1={"name": " "}, motor1={"joint": " "}), words=("link one",),
             why="blank names may be refused naming the element"))
    return c


def file_cases():
    c = []
    add = c.append
    add(Case("empty.xml", "an empty file", "refused", "", words=("empty",)))
    add(Case("whitespace.xml", "only whitespace and a comment", "refused", "  \n<!-- nothing -->\n\n", words=("XML",)))
    rng = random.Random(38)
    add(Case("garbage.xml", "4 KB of random bytes", "refused", bytes(rng.randrange(256) for _ in range(4096)),
             words=("XML",)))
    add(Case("nul_bytes.xml", "a valid file with NUL bytes in an attribute", "either",
             arm().encode().replace(b'name="link2"', b'name="li\x00nk2"'), words=("XML",),
             why="the XML parser stops at the NUL (refused) or reads the name up to it"))
    add(Case("utf16.xml", "a valid file encoded as UTF-16 with a BOM", "either",
             arm().encode("utf-16"), words=("XML",), why="tinyxml2 reads UTF-8 only: refused, or read"))
    add(Case("utf8_bom.xml", "a valid file with a UTF-8 byte-order mark", "loads", b"\xef\xbb\xbf" + arm().encode()))
    add(Case("invalid_utf8.xml", "invalid UTF-8 bytes in a body name", "either",
             arm().encode().replace(b'name="link2"', b'name="link\xff\xfe2"'), words=("UTF-8",),
             why="the bytes are a name to MuJoCo: loaded, or refused as not UTF-8"))
    add(Case("truncated.xml", "a valid file cut in the middle of an element", "refused", arm()[:len(arm()) // 2],
             words=("XML",)))
    add(Case("unclosed_tag.xml", "a body never closed", "refused", arm().replace("      </body>\n", "", 1),
             words=("XML",)))
    add(Case("wrong_root.xml", "a root element <robot> holding MJCF (read as a URDF without links)", "refused",
             arm().replace("<mujoco", "<robot").replace("</mujoco>", "</robot>"), words=("joint",)))
    add(Case("html.xml", "an HTML page", "refused", "<!DOCTYPE html>\n<html><body><p>not a robot</p></body></html>\n",
             words=("XML",)))
    add(Case("unknown_element.xml", "an element MuJoCo does not know", "refused",
             arm(in_body1='      <thruster name="t1" power="9000"/>\n'), words=("thruster",)))
    add(Case("unknown_attribute.xml", "an attribute MuJoCo does not know", "refused",
             arm(joint1={"springiness": "3"}), words=("springiness",)))
    add(Case("number_garbage.xml", "a mass of '1kg'", "refused", arm(inertial1={"mass": "1kg"}), words=("mass",)))
    add(Case("number_hex.xml", "a mass of 0x1p0 (a hexadecimal float)", "either", arm(inertial1={"mass": "0x1p0"}),
             words=("mass",), why="strtod reads it as 1: loaded with mass 1, or refused naming the attribute"))
    add(Case("too_many_numbers.xml", "a body pos with 5 numbers", "refused", arm(body1={"pos": "0 0 1 2 3"}),
             words=("pos",)))
    add(Case("too_few_numbers.xml", "a body pos with 2 numbers", "either", arm(body1={"pos": "0 1"}), words=("pos",),
             why="MuJoCo may read a short vector (the rest keeps its default) or refuse it"))
    add(Case("billion_laughs.xml", "XML entity expansion ('billion laughs', 10^9 copies if expanded) in names",
             "either", '<?xml version="1.0"?>\n<!DOCTYPE lolz [\n <!ENTITY lol "lol">\n'
             + "".join(f' <!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">\n' for i in range(1, 10))
             + ']>\n' + arm(model="&lol9;", body2={"name": "&lol9;"}), words=("XML",),
             why="tinyxml2 expands no entity of a DTD: the name stays '&lol9;' (loads), or the DTD is refused"))
    add(Case("external_entity.xml", "an external entity naming /etc/passwd (XXE)", "either",
             '<?xml version="1.0"?>\n<!DOCTYPE m [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n'
             + arm(body1={"name": "&xxe;"}), words=("XML",),
             why="tinyxml2 expands no entity: refused as XML, or the name is the literal text"))
    add(Case("huge_comment.xml", "a valid arm after a 4 MB comment", "loads",
             "<!--" + "x" * (4 << 20) + "-->\n" + arm()))
    add(Case("huge_attribute.xml", "a 4 MB attribute value (a joint's user data)", "either",
             arm(joint1={"user": " ".join(["1"] * (2 << 20))}), words=("user",),
             why="user data is not modelled: loaded, or refused naming it"))
    add(Case("many_geoms.xml", "20,000 non-colliding geoms on one body (3 MB)", "loads",
             arm(in_body1="".join(f'      <geom type="sphere" size="0.001" pos="0 0 {i * 1e-5:.5f}" mass="0" '
                                  'contype="0" conaffinity="0"/>\n' for i in range(20000)))))
    # nesting and size
    add(Case("bodies_10000.xml", "10,000 bodies side by side, a hinge each", "refused", chain(10000, False),
             words=("bodies",)))
    add(Case("nested_1000.xml", "1,000 bodies nested 1,000 levels deep", "refused", chain(1000, True),
             words=("nesting is too deep",)))
    add(Case("nested_240.xml", "240 bodies nested 240 levels deep (within the XML parser's depth)", "refused",
             chain(240, True), words=("240 bodies",)))
    add(Case("nested_100000.xml", "100,000 bodies nested 100,000 levels deep (the XML parser's recursion)", "refused",
             chain(100000, True), words=("nesting is too deep",), timeout=120))
    add(Case("bodies_33.xml", "33 bodies: one over steer's capacity", "refused", chain(33, True), words=("bodies",)))
    add(Case("bodies_32.xml", "32 nested bodies: steer's capacity exactly (valid)", "loads", chain(32, True)))
    add(Case("sites_many.xml", "40 sites: over steer's site capacity", "refused",
             arm(in_body2="".join(f'        <site name="s{i}" pos="0 0 {-0.005 * i:g}"/>\n' for i in range(40))),
             words=("sites",)))
    add(Case("defaults_deep.xml", "200 nested default classes", "loads",
             arm(head="  <default>\n" + "".join(f'<default class="c{i}">' for i in range(200)) + "</default>" * 200 + "\n  </default>\n")))
    # includes
    add(Case("include_missing.xml", "an include of a file that does not exist", "refused",
             arm(head='  <include file="no_such_part.xml"/>\n'), words=("no_such_part.xml",)))
    add(Case("include_self.xml", "a file that includes itself", "refused", arm(head='  <include file="include_self.xml"/>\n'),
             words=("include_self.xml",)))
    add(Case("include_cycle.xml", "a includes b, b includes a", "refused", arm(head='  <include file="include_cycle.b.part"/>\n'),
             words=("include_cycle",), companions=(("include_cycle.b.part",
                                                     '<mujoco>\n  <include file="include_cycle.xml"/>\n</mujoco>\n'),)))
    add(Case("include_absolute_missing.xml", "an include of an absolute path that does not exist", "refused",
             arm(head='  <include file="/nonexistent/steer/part.xml"/>\n'), words=("part.xml",)))
    add(Case("include_dev_null.xml", "an include of /dev/null", "refused", arm(head='  <include file="/dev/null"/>\n'),
             words=("/dev/null",)))
    add(Case("include_dev_zero.xml", "an include of /dev/zero (endless)", "refused",
             arm(head='  <include file="/dev/zero"/>\n'), words=("/dev/zero",)))
    add(Case("include_directory.xml", "an include of a directory", "refused", arm(head='  <include file="/"/>\n'),
             words=("include",)))
    add(Case("include_valid.xml", "an include of a part file with the actuators (valid)", "loads",
             arm(motor1="none", sections='  <include file="include_valid.part"/>\n'),
             companions=(("include_valid.part", '<mujoco>\n  <actuator><motor name="m" joint="hinge1"/></actuator>\n</mujoco>\n'),)))
    add(Case("include_wide.xml", "an include of a part that includes itself 3 levels down", "refused",
             arm(head='  <include file="include_wide.1.part"/>\n'), words=("include_wide",),
             companions=(("include_wide.1.part", '<mujoco><include file="include_wide.2.part"/></mujoco>\n'),
                         ("include_wide.2.part", '<mujoco><include file="include_wide.1.part"/></mujoco>\n'))))
    add(Case("include_fifo.xml", "an include of a FIFO nobody writes", "refused",
             arm(head='  <include file="include_fifo.fifo"/>\n'), words=("include_fifo.fifo",),
             companions=(("include_fifo.fifo", None),), timeout=5,
             xfail="hangs: MuJoCo's parser opens the FIFO and blocks; SIGTERM does not stop steer there"))
    add(Case("mesh_missing.xml", "a mesh asset whose file does not exist", "refused",
             arm(head='  <asset>\n    <mesh name="m" file="no_such_mesh.stl"/>\n  </asset>\n'), words=("no_such_mesh",)))
    add(Case("mesh_garbage.xml", "a mesh asset whose file is this XML file", "refused",
             arm(head='  <asset>\n    <mesh name="m" file="mesh_garbage.xml"/>\n  </asset>\n'), words=("mesh",)))
    # special files named by the config
    add(Case("fifo.xml", "the config names a FIFO nobody writes", "refused", special="fifo", timeout=5))
    add(Case("directory.xml", "the config names a directory", "refused", special="dir"))
    add(Case("dev_zero.xml", "the config names /dev/zero (endless)", "refused", special="/dev/zero", memory_mb=1024))
    add(Case("dev_null.xml", "the config names /dev/null (a device)", "refused", special="/dev/null",
             words=("not a regular file",)))
    add(Case("missing.xml", "the config names a file that does not exist", "refused", special="missing",
             words=("cannot read",)))
    return c


def urdf_cases():
    c = []
    add = c.append
    add(Case("urdf_valid.urdf", "a two-link URDF (valid)", "loads", urdf(), params=(("link1.mass", 1.0),)))
    add(Case("urdf_mass_zero.urdf", "a URDF link of mass 0 on a moving joint", "refused", urdf(link1={"mass": "0"}),
             words=("link1",)))
    add(Case("urdf_mass_nan.urdf", "a URDF link of mass nan", "refused", urdf(link1={"mass": "nan"}), words=("link1",)))
    add(Case("urdf_inertia_negative.urdf", "a URDF link with ixx -0.01", "refused", urdf(link1={"ixx": "-0.01"}),
             words=("link1",)))
    add(Case("urdf_axis_zero.urdf", "a URDF revolute joint with axis 0 0 0", "refused", urdf(joint1={"axis": "0 0 0"}),
             words=("joint1",)))
    add(Case("urdf_limit_reversed.urdf", "a URDF limit lower 1 upper -1", "either",
             urdf(joint1={"limit": '    <limit lower="1" upper="-1" effort="10" velocity="5"/>\n'}), words=("joint1",),
             why="MuJoCo's URDF reader leaves such a joint unlimited (steer then runs it unlimited), or it is refused"))
    add(Case("urdf_missing_parent.urdf", "a URDF joint whose parent link does not exist", "refused",
             urdf(joint1={"parent": "phantom_link"}), words=("parent or child missing", "line 17")))
    add(Case("urdf_cycle.urdf", "a URDF whose joints form a cycle", "refused",
             urdf(extra=URDF_JOINT.format(name="joint_back", type="revolute", parent="link1", child="base", xyz="0 0 0",
                                          axis="1 0 0", limit="")), words=("URDF",)))
    add(Case("urdf_inf_origin.urdf", "a URDF joint origin at inf", "refused", urdf(joint1={"xyz": "0 0 inf"}),
             words=("link1",)))
    add(Case("urdf_floating.urdf", "a URDF floating joint", "either", urdf(joint1={"type": "floating", "limit": ""}),
             words=("joint1",), why="a floating joint below a fixed base is a free joint below the root: refused, "
                                    "or the base is the world and it loads"))
    add(Case("urdf_empty_robot.urdf", "<robot/> and nothing else", "refused", '<robot name="nothing"/>\n',
             words=("joint",)))
    return c


def corpus():
    cases = nonfinite_cases() + physics_cases() + reference_cases() + file_cases() + urdf_cases()
    names = [c.name for c in cases]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise AssertionError(f"corpus: duplicate file names {dup}")
    return cases


# ---------------------------------------------------------------- writing the corpus


def current_umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomically(path, text):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o666 & ~current_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def as_bytes(content):
    return content if isinstance(content, bytes) else content.encode("utf-8")


def model_path(case, folder):
    """What the config names: the corpus file, or the outside path the case names."""
    return Path(case.special) if case.special.startswith("/") else Path(folder) / case.name


def manifest(cases):
    return {"tool": "tools/mjcf_adversarial.py", "files": [
        {"file": c.name, "what": c.what, "expect": c.expect, "words": list(c.words), "why": c.why,
         "params": {k: v for k, v in c.params}, "xfail": c.xfail, "special": c.special,
         "companions": [n for n, _ in c.companions]} for c in cases]}


def write_corpus(folder, cases):
    """The corpus files (and their companions, FIFOs, folders) with manifest.json in folder, which
    appears whole: written beside it, then renamed into place. An existing folder is replaced
    only when it holds a manifest of this tool."""
    folder = Path(folder)
    if folder.exists() and not (folder / MANIFEST).is_file():
        if not folder.is_dir() or any(folder.iterdir()):
            raise Failure(f"{folder} exists and is not a corpus of this tool (no {MANIFEST}): not replaced")
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        for c in cases:
            for name, content in c.companions:
                if content is None:
                    os.mkfifo(tmp / name)
                else:
                    (tmp / name).write_bytes(as_bytes(content))
            if c.special == "fifo":
                os.mkfifo(tmp / c.name)
            elif c.special == "dir":
                (tmp / c.name).mkdir()
            elif c.content is not None:
                (tmp / c.name).write_bytes(as_bytes(c.content))
        (tmp / MANIFEST).write_text(json.dumps(manifest(cases), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        tmp.chmod(0o777 & ~current_umask())
        if folder.exists():
            shutil.rmtree(folder)
        tmp.rename(folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


# ---------------------------------------------------------------- running steer


def load_config(key, path, name="adversarial"):
    """One step on the CPU, float64, no variables (the gradient check is off)."""
    return {"name": name, "description": "an adversarial robot file (tools/mjcf_adversarial.py)",
            "model": {"type": "articulated", key: str(path)},
            "simulation": {"steps": 1, "precision": "float64", "backend": "cpu"},
            "loss": {"control_effort": 1},
            "validation": {"enabled": False},
            "output": {"trajectory_rollouts": 0}}


def limit_memory(mb):
    def apply():
        resource.setrlimit(resource.RLIMIT_AS, (mb << 20, mb << 20))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return apply


@dataclass
class Run:
    returncode: int  # -N: killed by signal N; None: timed out (killed)
    output: str  # stdout and stderr
    artifacts: list  # the artifact.json files written
    seconds: float
    shown: str = ""  # the file as the config names it (steer quotes it in its messages)


def run_steer(steer, key, path, work, tag, timeout, memory_mb):
    """steer run on a one-step config importing path: config in work/configs, artifacts under
    work/runs/<tag>, run in work/scratch (MuJoCo writes MUJOCO_LOG.TXT into the working folder)."""
    config = work / "configs" / f"{tag}.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps(load_config(key, path), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    runs = work / "runs" / tag
    if runs.exists():
        shutil.rmtree(runs)
    scratch = work / "scratch"
    scratch.mkdir(parents=True, exist_ok=True)
    cmd = [str(steer), "run", "--quiet", "--threads", "1", "--out", str(runs), str(config)]
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, timeout=timeout, cwd=scratch, preexec_fn=limit_memory(memory_mb))
        rc, out = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as e:  # subprocess kills it (SIGKILL)
        rc, out = None, (e.stdout or b"") + (e.stderr or b"")
    seconds = time.monotonic() - start
    artifacts = sorted(str(p) for p in runs.rglob("artifact.json")) if runs.is_dir() else []
    return Run(rc, out.decode("utf-8", errors="replace"), artifacts, seconds, str(path))


# ---------------------------------------------------------------- reading the outcome


@dataclass
class Outcome:
    status: str  # "loads", "refused" or "error"
    reason: str = ""  # error: what went wrong
    message: str = ""  # the steer message (its first line and the indented lines under it)
    exit_code: object = 0
    seconds: float = 0.0
    artifact: dict = field(default_factory=dict)  # loads: the artifact's facts checked
    shown: str = ""  # the file as the config names it

    def first_line(self):
        """The message's first line, with MuJoCo's first line when steer's only introduces it."""
        lines = self.message.splitlines()
        if not lines:
            return ""
        first = lines[0]
        if first.endswith(":") and len(lines) > 1:
            first += " " + lines[1].strip()
        return first


def steer_message(output):
    """The first 'steer: ' line of the output and the indented lines under it."""
    lines = output.splitlines()
    for i, ln in enumerate(lines):
        if ln.startswith("steer: "):
            block = [ln]
            for more in lines[i + 1:]:
                if not more.startswith("  "):
                    break
                block.append(more)
            return "\n".join(block)
    return ""


def finite_numbers(value, where, bad):
    """Appends to bad the paths of non-finite numbers (and of NaN or Infinity strings) in value."""
    if isinstance(value, dict):
        for k, v in value.items():
            finite_numbers(v, f"{where}.{k}", bad)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            finite_numbers(v, f"{where}[{i}]", bad)
    elif value is None or (isinstance(value, float) and not math.isfinite(value)):
        bad.append(where)  # steer writes a non-finite number as null


def artifact_facts(path):
    """The loaded model's parameters and the state after the step, checked: {"params": {name:
    value}, "problems": [...]}."""
    try:
        art = json.loads(Path(path).read_text(encoding="utf-8"),
                         parse_constant=lambda c: float(c))  # NaN and Infinity as numbers
    except (OSError, ValueError) as e:
        return {"params": {}, "problems": [f"artifact {path} unreadable: {e}"]}
    model = art.get("effective_config", {}).get("model", {})
    params = {k: v.get("value") if isinstance(v, dict) else v for k, v in model.get("parameters", {}).items()}
    problems = []
    if not params:
        problems.append("the artifact lists no model parameters")
    bad = []
    finite_numbers(params, "parameters", bad)
    dt = art.get("effective_config", {}).get("simulation", {}).get("dt")
    finite_numbers(dt.get("value") if isinstance(dt, dict) else dt, "simulation.dt", bad)
    result = art.get("result", {})
    finite_numbers(result.get("final_state", []), "final_state", bad)
    for k in ("loss_initial_mean", "loss_final_mean"):
        if k in result:
            finite_numbers(result[k], k, bad)
    if not result.get("final_state"):
        problems.append("the artifact has no final state")
    if result.get("loss_final_nonfinite_rollouts"):
        bad.append("loss_final_nonfinite_rollouts")
    problems += [f"non-finite {b}" for b in bad[:5]]
    # the massless frames of a body's several joints (<body>.joint_frame.<joint>) carry mass 0 by design
    problems += [f"{k} = {v} is not positive" for k, v in params.items()
                 if k.endswith(".mass") and "_frame." not in k and isinstance(v, (int, float)) and not v > 0][:5]
    if "imported_from" not in model:
        problems.append("the artifact's model has no imported_from")
    return {"params": params, "problems": problems}


def classify(key, run, read_artifact=artifact_facts):
    """An Outcome from a Run: loads (exit 0, one artifact, finite), refused (exit 2 at
    model.<key>, nothing written, a message of bounded size) or error."""
    message = steer_message(run.output)
    o = Outcome("error", message=message, exit_code=run.returncode, seconds=run.seconds, shown=run.shown)
    prefix = f"steer: config: model.{key}: "
    if run.returncode is None:
        o.reason = f"hangs: no exit within {run.seconds:.0f} s (killed)"
    elif run.returncode < 0:
        o.reason = f"crashes: killed by signal {-run.returncode}"
    elif run.returncode == 0:
        if len(run.artifacts) != 1:
            o.reason = f"exit 0 but {len(run.artifacts)} artifacts written"
        else:
            facts = read_artifact(run.artifacts[0])
            o.artifact = facts
            if facts["problems"]:
                o.reason = "loads, but " + "; ".join(facts["problems"])
            else:
                o.status = "loads"
    elif run.returncode != 2:
        o.reason = f"exit {run.returncode}" + (f": {message.splitlines()[0]}" if message else " without a message")
    elif not message:
        o.reason = "exit 2 without a 'steer: ' message"
    elif not message.startswith(prefix):
        o.reason = f"refused at another key than model.{key}: {message.splitlines()[0]}"
    elif run.artifacts:
        o.reason = "refused, but an artifact was written"
    elif len(message.encode("utf-8")) > OUTPUT_CAP:
        o.reason = f"refused with a message of {len(message.encode('utf-8'))} bytes (more than {OUTPUT_CAP})"
    else:
        o.status = "refused"
    return o


def missing_words(case, outcome):
    """The case's words that the message lacks, read without the file's path as steer quotes it
    (a path would name the file, not the element)."""
    text = outcome.message.replace(outcome.shown, "") if outcome.shown else outcome.message
    text = text.casefold()
    return [w for w in case.words if w.casefold() not in text]


def judge(case, o):
    """(verdict, note): PASS, FAIL, XFAIL (a known defect, not failing) or XPASS (the defect is
    gone: remove the mark; failing). The note says what is wrong (empty for PASS)."""
    problem = ""
    if o.status == "error":
        problem = o.reason
    elif o.status == "loads" and case.expect == "refused":
        problem = f"loads; expected a refusal naming {', '.join(case.words)}"
    elif o.status == "refused" and case.expect == "loads":
        problem = f"refused; expected to load: {o.first_line()}"
    elif o.status == "refused":
        missing = missing_words(case, o)
        if missing:
            problem = f"refused without naming {', '.join(repr(w) for w in missing)}: {o.first_line()}"
    elif o.status == "loads":
        wrong = []
        for name, want in case.params:
            got = o.artifact.get("params", {}).get(name)
            if not isinstance(got, (int, float)) or not abs(got - want) <= 1e-9 * max(1.0, abs(want)):
                wrong.append(f"{name} = {got}, expected {want:.12g}")
        if wrong:
            problem = "loads, but " + "; ".join(wrong)
    if case.xfail:  # the known defect's reason is the case's; the note is what happened
        return ("XFAIL", problem) if problem else ("XPASS", "meets its expectation now: remove its xfail mark")
    return ("FAIL", problem) if problem else ("PASS", "")


def cell(text, width=0):
    text = " ".join(str(text).split()).replace("|", "\\|")
    text = re.sub(r"(?<!`)(</?[A-Za-z][^<>`]*>)(?!`)", r"`\1`", text)
    return text if not width or len(text) <= width else text[:width - 1] + "…"


def table(rows):
    """rows: [(case, outcome, verdict, note)] as markdown."""
    out = ["| file | what | expected | outcome | verdict | first line of the message |", "|---|---|---|---|---|---|"]
    for c, o, verdict, note in rows:
        shown = note if verdict in ("FAIL", "XFAIL") else (o.first_line() or o.reason)
        out.append(f"| `{cell(c.name)}` | {cell(c.what, 90)} | {cell(c.expectation(), 40)} | {o.status} "
                   f"({o.seconds:.2f} s) | {verdict} | {cell(shown, 200)} |")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- the check


def steer_import(steer):
    """The MuJoCo version steer's import compiles with; Skip where it has no import."""
    try:
        proc = subprocess.run([str(steer), "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        usage_error(f"--steer: cannot run {steer}: {e}")
    if proc.returncode != 0:
        raise Failure(f"{steer} --version exited with {proc.returncode}: {proc.stderr.strip()}")
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("MuJoCo import:")), "")
    m = re.match(r"MuJoCo import: on \(MuJoCo ([0-9.]+)\)", line)
    if not m:
        raise Skip(f"{steer} cannot import MJCF: {line or 'its --version names no MuJoCo import'}")
    return m.group(1)


MARK = ".mjcf_adversarial"  # in the folders this tool empties and fills (work/, fuzz/)


def fresh_folder(path):
    """path, empty but for its mark: made, or emptied when this tool made it (its mark); Failure
    for a folder of something else, which is left as it is."""
    if path.exists():
        if not (path / MARK).is_file() and (not path.is_dir() or any(path.iterdir())):
            raise Failure(f"{path} exists and was not made by this tool (no {MARK} in it): not replaced")
        shutil.rmtree(path)
    path.mkdir(parents=True)
    (path / MARK).write_text("made by tools/mjcf_adversarial.py; emptied by its next run\n")
    return path


def check(args, cases):
    out = args.out
    corpus_dir = out / "corpus"
    write_corpus(corpus_dir, cases)
    work = fresh_folder(out / "work")
    rows = []
    start = time.monotonic()
    for i, c in enumerate(cases):
        # relative to the config's folder (work/configs), as a robot config names its file
        path = model_path(c, Path("..") / ".." / "corpus")
        run = run_steer(args.steer, c.key, path, work, f"{i:03d}_{Path(c.name).stem}"[:80],
                        c.timeout or args.timeout, c.memory_mb or args.memory_mb)
        o = classify(c.key, run)
        verdict, note = judge(c, o)
        rows.append((c, o, verdict, note))
        if args.verbose:
            print(f"{verdict:5s} {c.name}: {o.status} {o.first_line()[:150] or o.reason}", flush=True)
    seconds = time.monotonic() - start
    text = table(rows)
    counts = {k: sum(1 for _, o, _, _ in rows if o.status == k) for k in ("loads", "refused", "error")}
    verdicts = {k: sum(1 for r in rows if r[2] == k) for k in ("PASS", "FAIL", "XFAIL", "XPASS")}
    summary = (f"{len(rows)} files in {seconds:.1f} s: {counts['loads']} load, {counts['refused']} refused, "
               f"{counts['error']} errors; {verdicts['PASS']} as expected, {verdicts['FAIL']} failed, "
               f"{verdicts['XFAIL']} known defects (xfail), {verdicts['XPASS']} xfail now passing")
    print(text + "\n" + summary)
    xf = [(c, note) for c, _, v, note in rows if v == "XFAIL"]
    if xf:
        print("known steer defects (xfail, not failing):")
        for c, note in xf:
            print(f"  {c.name}: {cell(note, 300)}\n      known: {c.xfail}")
    if args.markdown:
        write_atomically(args.markdown, text + "\n" + summary + "\n")
    if args.json:
        write_atomically(args.json, json.dumps({
            "tool": "tools/mjcf_adversarial.py --check", "seconds": round(seconds, 2), "counts": counts,
            "verdicts": verdicts, "files": [
                {"file": c.name, "what": c.what, "expect": c.expectation(), "status": o.status, "verdict": v,
                 "note": note, "xfail": c.xfail,
                 "exit_code": o.exit_code, "seconds": round(o.seconds, 3), "message": o.message[:2000]}
                for c, o, v, note in rows]}, indent=1, ensure_ascii=False) + "\n")
    return [f"{c.name}: {verdict}: {cell(note, 300)}" + (f" (xfail: {c.xfail})" if c.xfail else "")
            for c, _, verdict, note in rows if verdict in ("FAIL", "XPASS")]


# ---------------------------------------------------------------- the fuzzer

NUMBER = re.compile(rb"(?<![A-Za-z_#&])-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
ATTRIBUTE = re.compile(rb'\s[A-Za-z_:][-A-Za-z0-9_:.]*="[^"]*"')
ELEMENT = re.compile(rb"<[A-Za-z][^<>]*/>|<([A-Za-z][-A-Za-z0-9_]*)[^<>]*>[^<]*</\1>")
EXTREMES = (b"nan", b"-nan", b"inf", b"-inf", b"1e400", b"-1e400", b"0", b"-0", b"-1", b"1e308", b"-1e308",
            b"1e-320", b"1e20", b"-1e20", b"1e-12", b"2147483648", b"-2147483649", b"1e", b"0x10", b"", b"1 2")


def mutate_once(rng, data, seeds):
    """One mutation of data (bytes): (new data, what was done)."""
    kinds = ["number"] * 6 + ["delete_attribute", "duplicate_attribute", "swap_attribute",
             "delete_element", "duplicate_element", "truncate", "splice", "byte"]
    kind = rng.choice(kinds)
    if kind == "number":
        spots = list(NUMBER.finditer(data))
        if spots:
            m = rng.choice(spots)
            value = rng.choice(EXTREMES)
            return data[:m.start()] + value + data[m.end():], f"number {m.group().decode()} -> {value.decode()!r}"
    elif kind in ("delete_attribute", "duplicate_attribute", "swap_attribute"):
        spots = list(ATTRIBUTE.finditer(data))
        if spots:
            m = rng.choice(spots)
            text = m.group()
            if kind == "delete_attribute":
                return data[:m.start()] + data[m.end():], f"delete{text.decode(errors='replace')}"
            if kind == "duplicate_attribute":
                return data[:m.end()] + text + data[m.end():], f"duplicate{text.decode(errors='replace')}"
            other = rng.choice(spots).group()
            value = other[other.index(b'="'):]
            new = text[:text.index(b'="')] + value
            return data[:m.start()] + new + data[m.end():], f"swap{text.decode(errors='replace')} -> {new.decode(errors='replace')}"
    elif kind in ("delete_element", "duplicate_element"):
        spots = list(ELEMENT.finditer(data))
        if spots:
            m = rng.choice(spots)
            what = m.group()[:40].decode(errors="replace")
            if kind == "delete_element":
                return data[:m.start()] + data[m.end():], f"delete element {what}"
            return data[:m.end()] + m.group() + data[m.end():], f"duplicate element {what}"
    elif kind == "truncate" and data:
        at = rng.randrange(len(data))
        return data[:at], f"truncate at byte {at}"
    elif kind == "splice":
        other = rng.choice(seeds)[1]
        a, b = rng.randrange(len(data) + 1), rng.randrange(len(other) + 1)
        return data[:a] + other[b:], f"splice at byte {a} with another seed from byte {b}"
    if data:
        at = rng.randrange(len(data))
        value = rng.choice(b"<>\"'&/=\x00\xff 0-.e")
        return data[:at] + bytes([value]) + data[at + 1:], f"byte {at} -> {bytes([value])!r}"
    return data, "nothing (empty)"


# a refusal of the known defect's kind (MAPPED_KEY): exit 2 at a key of the
# mapped model or at simulation.dt, which the fuzzer counts and does not fail
KNOWN_REFUSAL = re.compile(r"^steer: config: (model\.(bodies|contacts|sites|gravity|keyframes|tip|contact)\b|"
                           r"simulation\.dt: missing)")


def fuzz_verdict(o):
    """'ok' (loads, or refused at model.<key>), 'known' (a known defect's kind of refusal) or 'error'."""
    if o.status != "error":
        return "ok"
    if o.exit_code == 2 and KNOWN_REFUSAL.match(o.message) and o.reason.startswith("refused at another key"):
        return "known"
    return "error"


def mutants(seeds, n, seed):
    """n (name, key, bytes, [what]) mutants of the seeds [(path, bytes)], deterministic in seed."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        path, data = seeds[rng.randrange(len(seeds))]
        done = []
        for _ in range(rng.choice((1, 1, 2, 3))):
            data, what = mutate_once(rng, data, seeds)
            done.append(what)
        key = "urdf" if path.suffix == ".urdf" else "mjcf"
        out.append((f"{i:04d}_{path.stem}{path.suffix}", key, data, done))
    return out


def fuzz(args):
    seeds = [(p, p.read_bytes()) for p in args.seeds]
    out = fresh_folder(args.out / "fuzz")
    files = out / "files"
    files.mkdir(parents=True)
    work = out / "work"
    problems, counts, known = [], {"loads": 0, "refused": 0}, []
    start = time.monotonic()
    listing = []
    for name, key, data, done in mutants(seeds, args.fuzz, args.seed):
        (files / name).write_bytes(data)
        run = run_steer(args.steer, key, (files / name).resolve(), work, Path(name).stem, args.timeout, args.memory_mb)
        o = classify(key, run)
        verdict = fuzz_verdict(o)
        listing.append(f"{name}\t{o.status if verdict == 'ok' else verdict}\t{'; '.join(done)}\t"
                       f"{cell(o.first_line() or o.reason, 300)}")
        line = f"{files / name}: {cell(o.reason, 300)} (mutations: {'; '.join(done)})"
        if verdict == "error":
            problems.append(line)
        elif verdict == "known":
            known.append(line)
        else:
            counts[o.status] += 1
        if args.verbose:
            print(f"{name}: {o.status} {o.first_line()[:150] or o.reason}", flush=True)
    seconds = time.monotonic() - start
    (out / "listing.tsv").write_text("\n".join(listing) + "\n", encoding="utf-8")
    print(f"{args.fuzz} mutants of {len(seeds)} seed files (seed {args.seed}) in {seconds:.1f} s: "
          f"{counts['loads']} load, {counts['refused']} refused, {len(known)} refused at a mapped key (known defect), "
          f"{len(problems)} errors; files and listing in {out}")
    if known:
        print(f"refused at a key of the mapped model or at simulation.dt, not at the file's element (known: {MAPPED_KEY}):")
        for line in known:
            print(f"  {line}")
    return problems


# ---------------------------------------------------------------- main


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", type=Path, metavar="DIR", help="write the corpus and its manifest into DIR")
    mode.add_argument("--check", action="store_true", help="run steer on every file of the corpus")
    mode.add_argument("--fuzz", type=int, metavar="N", help="run steer on N mutants of the seed files")
    mode.add_argument("--list", action="store_true", help="list the corpus (file, expected outcome, what)")
    p.add_argument("--steer", type=Path, metavar="PATH", help="the steer CLI (--check, --fuzz)")
    p.add_argument("--out", type=Path, metavar="DIR", help="folder for the corpus, the configs and the runs "
                   "(--check, --fuzz; replaced parts: DIR/corpus, DIR/work, DIR/fuzz)")
    p.add_argument("--seed", type=int, metavar="S", help="--fuzz: the draw's seed")
    p.add_argument("--seeds", type=Path, nargs="+", metavar="FILE",
                   help="--fuzz: the files to mutate (default configs/mjcf/*.xml and *.urdf)")
    p.add_argument("--timeout", type=float, default=60.0, metavar="S", help="seconds for one steer run (default 60)")
    p.add_argument("--memory-mb", type=int, default=8192, metavar="MB",
                   help="address-space limit of each steer run (default 8192; MuJoCo reserves about 4 GB "
                        "to compile 10,000 bodies)")
    p.add_argument("--only", nargs="+", metavar="NAME", help="--check: only these files of the corpus")
    p.add_argument("--markdown", type=Path, metavar="PATH", help="--check: write the table here")
    p.add_argument("--json", type=Path, metavar="PATH", help="--check: write the outcomes as JSON here")
    p.add_argument("--verbose", action="store_true", help="print each file's outcome as it comes")
    args = p.parse_args(argv)
    running = args.check or args.fuzz is not None
    if running:
        if args.steer is None:
            usage_error("--steer PATH is needed with --check and --fuzz")
        if not args.steer.is_file() or not os.access(args.steer, os.X_OK):
            usage_error(f"--steer: no executable {args.steer}")
        if args.out is None:
            usage_error("--out DIR is needed with --check and --fuzz")
        if args.out.exists() and not args.out.is_dir():
            usage_error(f"--out: {args.out} is not a folder")
        args.steer = args.steer.resolve()
        args.out = args.out.resolve()
    else:
        for name in ("steer", "out", "markdown", "json", "only"):
            if getattr(args, name) is not None:
                usage_error(f"--{name}: only with --check or --fuzz")
    if args.fuzz is not None:
        if args.fuzz < 1:
            usage_error(f"--fuzz: N must be at least 1, got {args.fuzz}")
        if args.seed is None:
            usage_error("--fuzz needs --seed S")
        if args.only or args.markdown or args.json:
            usage_error("--only, --markdown and --json are for --check")
        if args.seeds is None:
            args.seeds = sorted((ROOT / "configs" / "mjcf").glob("*.xml")) + sorted((ROOT / "configs" / "mjcf").glob("*.urdf"))
        for s in args.seeds:
            if not s.is_file():
                usage_error(f"--seeds: no file {s}")
        if not args.seeds:
            usage_error("--seeds: no seed files")
    else:
        if args.seed is not None or args.seeds is not None:
            usage_error("--seed and --seeds are for --fuzz")
    if not args.timeout > 0:
        usage_error(f"--timeout: must be > 0, got {args.timeout}")
    if not args.memory_mb >= 256:
        usage_error(f"--memory-mb: must be at least 256, got {args.memory_mb}")
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    cases = corpus()
    if args.only:
        known = {c.name for c in cases}
        unknown = [n for n in args.only if n not in known]
        if unknown:
            usage_error(f"--only: no file {', '.join(unknown)} in the corpus (--list lists them)")
        cases = [c for c in cases if c.name in args.only]
    try:
        if args.list:
            for c in cases:
                print(f"{c.name}\t{c.expectation()}{' [xfail]' if c.xfail else ''}\t{c.what}")
            return 0
        if args.write:
            write_corpus(args.write, cases)
            print(f"mjcf_adversarial.py: wrote {len(cases)} files and {MANIFEST} into {args.write}")
            return 0
        version = steer_import(args.steer)
        print(f"mjcf_adversarial.py: {args.steer} (MuJoCo {version})", flush=True)
        problems = check(args, cases) if args.check else fuzz(args)
    except Skip as e:
        print(f"mjcf_adversarial.py: SKIP: {e}")
        return SKIP
    except Failure as e:
        print(f"mjcf_adversarial.py: FAILED: {e}")
        return 1
    if problems:
        print("mjcf_adversarial.py: FAILED:")
        for line in problems:
            print(f"  {line}")
        return 1
    print("mjcf_adversarial.py: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
