#!/usr/bin/env python3
"""Writes the engine-scale scenes of scenes/engine/ (explicit stepper): a stack of 50 boxes,
a pile of 200 boxes dropped into a bin, a wall of 100 bricks, and, as MuJoCo MJCF files that
MuJoCo steps itself in the engine benchmark, a pile of 200 capsules and a pile of 200 convex
rocks (hulls of 12 to 30 random points). Deterministic: run it again to regenerate the files
after changing a size here. The stack steps the Coulomb cone by default;
the pile and the wall the convex model (convex-newton), which solves every one of their steps
to the tolerance where the cone's solvers do not (docs/steppers.md, "Engine-scale scenes").

  python3 tools/make_engine_scenes.py                 the three shipped scenes
  python3 tools/make_engine_scenes.py --pile N FILE   a pile of N cubes (1 to 100000) in layers
                                                      of c x c, c the cube root of N rounded,
                                                      above a bin 0.4 c m wide: N = 1000 is
                                                      10 x 10 x 10 in a 4 m bin
  python3 tools/make_engine_scenes.py --mixed SEED FILE
                                  27 bodies of mixed kinds (boxes, spheres, capsules,
                                  cylinders, ellipsoids) of random sizes, masses and
                                  orientations in three layers of 3 x 3, dropped into a 1 m bin
                                  for 1 s with the explicit stepper's defaults (docs/reliability.md)
"""
import json
import math
import os
import sys

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scenes", "engine")
GROUND = {"name": "ground", "shape": "plane", "normal": [0, 0, 1]}


def box(name, size, position, mass=1.0, orientation=None):
    b = {"name": name, "shape": "box", "size": size, "mass": mass,
         "position": [round(x, 6) for x in position]}
    if orientation is not None:
        b["orientation"] = [round(x, 9) for x in orientation]
    return b


def write(name, scene):
    with open(os.path.join(HERE, name), "w") as f:
        json.dump(scene, f, indent=1)
        f.write("\n")


def stack50():
    # 5 x 5 columns of two unit boxes, 5 mm gaps, dropped and left to rest (as the implicit
    # stepper's 50-box benchmark).
    gap = 0.005
    bodies = [box("b%d" % (10 * i + 2 * j + k), [1, 1, 1],
                  [i * (1 + gap), j * (1 + gap), 0.5 + gap + k * (1 + gap)])
              for i in range(5) for j in range(5) for k in range(2)]
    return {"name": "50-box stack", "description": "5 x 5 columns of two unit boxes dropped "
            "from 5 mm and left to rest", "stepper": "explicit", "model": "cone",
            "solver": "nsgs-velocity", "tolerance": 1e-6, "h": 0.01, "gravity": [0, 0, -9.81],
            "duration": 1.0, "contact": {"mu": 0.5},
            "fixed": [GROUND], "bodies": bodies}


def pile(count=200):
    # `count` cubes of 0.2 m in a lattice of side x side x layers above a square bin, each
    # turned a little about its own axis, dropped together. 200: 5 x 5 x 8 at a pitch of
    # 0.26 m in a 1.6 m bin (0.32 m a column), the shipped pile, whose turns happen to leave
    # its cubes apart. Other counts: a pitch of 0.35 m, above the cube's diagonal (0.2 sqrt 3),
    # so that no two turned cubes meet at the start whatever their turns, in 0.4 m of bin a
    # column.
    side = 0.2
    shipped = count == 200
    pitch, bin_per_column = (0.26, 0.32) if shipped else (0.35, 0.4)
    wall = 0.1
    columns = 5 if shipped else int(round(count ** (1.0 / 3.0)))
    layers = -(-count // (columns * columns))
    bodies = []
    for k in range(layers):
        for i in range(columns):
            for j in range(columns):
                n = len(bodies)
                if n == count:
                    break
                angle = 0.35 * math.sin(1.7 * n + 0.3)
                axis = [math.sin(n), math.cos(2 * n), 1.0]
                norm = math.sqrt(sum(a * a for a in axis))
                s = math.sin(angle / 2) / norm
                q = [math.cos(angle / 2), axis[0] * s, axis[1] * s, axis[2] * s]
                centre = (columns - 1) / 2.0
                bodies.append(box("c%d" % n, [side] * 3,
                                  [(i - centre) * pitch, (j - centre) * pitch, 0.3 + k * pitch],
                                  1.0, q))
    inner = bin_per_column * columns
    height = 1.0 if shipped else round(0.2 * layers + 0.5, 3)
    fixed = [GROUND]
    for name, pos, size in [("wall_east", [inner / 2 + wall / 2, 0, height / 2], [wall, inner + 2 * wall, height]),
                            ("wall_west", [-inner / 2 - wall / 2, 0, height / 2], [wall, inner + 2 * wall, height]),
                            ("wall_north", [0, inner / 2 + wall / 2, height / 2], [inner, wall, height]),
                            ("wall_south", [0, -inner / 2 - wall / 2, height / 2], [inner, wall, height])]:
        if not shipped:  # (the shipped pile keeps its file byte for byte)
            size, pos = [round(x, 6) for x in size], [round(x, 6) for x in pos]
        fixed.append({"name": name, "shape": "box", "size": size, "position": pos})
    return {"name": "%d-box pile" % count,
            "description": "%d cubes of 0.2 m dropped into a %.3g m bin" % (count, inner),
            "stepper": "explicit", "model": "convex", "solver": "convex-newton",
            "tolerance": 1e-6, "h": 0.01, "gravity": [0, 0, -9.81], "duration": 2.0,
            "contact": {"mu": 0.5}, "fixed": fixed, "bodies": bodies}


def wall100():
    # Ten courses of ten 0.4 x 0.2 x 0.2 m bricks in running bond, resting: every other course
    # is shifted by half a brick and ends in a half brick, so that no brick hangs over the end
    # of the course below (a full brick there would have its centre over that end and topple).
    length, depth, height = 0.4, 0.2, 0.2
    bodies = []
    for course in range(10):
        z = height / 2 + course * height
        if course % 2 == 0:
            for k in range(10):
                bodies.append(box("brick%d_%d" % (course, k), [length, depth, height],
                                  [k * length, 0, z], 2.0))
        else:
            for k in range(9):
                bodies.append(box("brick%d_%d" % (course, k), [length, depth, height],
                                  [k * length + 0.5 * length, 0, z], 2.0))
            bodies.append(box("brick%d_9" % course, [0.5 * length, depth, height],
                              [9 * length + 0.25 * length, 0, z], 1.0))
    return {"name": "100-brick wall", "description": "ten courses of ten bricks in running bond",
            "stepper": "explicit", "model": "convex", "solver": "convex-newton",
            "tolerance": 1e-6, "h": 0.01, "gravity": [0, 0, -9.81], "duration": 2.0,
            "contact": {"mu": 0.6}, "fixed": [GROUND], "bodies": bodies}


def mjcf_bin(name, description, bodies, assets, columns, rows, pitch, extra=""):
    # An MJCF model: `bodies` (body elements) dropped into a bin of columns x rows cells of
    # `pitch`, 0.6 m high, at a time step of 5 ms (a body falling 1.5 m moves 27 mm a step,
    # less than any body's thickness).
    wx, wy, wall, height = columns * pitch / 2, rows * pitch / 2, 0.05, 0.6
    walls = [("wall_east", (wx + wall, 0), (wall, wy + 2 * wall)),
             ("wall_west", (-wx - wall, 0), (wall, wy + 2 * wall)),
             ("wall_north", (0, wy + wall), (wx, wall)),
             ("wall_south", (0, -wy - wall), (wx, wall))]
    lines = ['<mujoco model="%s">' % name,
             "  <!-- %s; written by tools/make_engine_scenes.py -->" % description,
             '  <option timestep="0.005" gravity="0 0 -9.81"/>',
             '  <size nconmax="1500" njmax="6000"/>',
             '  <default><geom friction="0.5 0.005 0.0001" density="1000"/></default>' + extra]
    if assets:
        lines += ["  <asset>"] + ["    " + a for a in assets] + ["  </asset>"]
    lines += ["  <worldbody>", '    <geom name="ground" type="plane" size="5 5 0.1"/>']
    for wname, (x, y), (sx, sy) in walls:
        lines.append('    <geom name="%s" type="box" size="%g %g %g" pos="%g %g %g"/>'
                     % (wname, sx, sy, height / 2, x, y, height / 2))
    lines += ["    " + b for b in bodies] + ["  </worldbody>", "</mujoco>"]
    return "\n".join(lines) + "\n"


def lattice(count, columns, rows, pitch, bottom):
    # Cell centres of a columns x rows lattice, layer after layer from `bottom` up.
    for n in range(count):
        k, rest = divmod(n, columns * rows)
        i, j = divmod(rest, rows)
        yield n, ((i - (columns - 1) / 2.0) * pitch, (j - (rows - 1) / 2.0) * pitch,
                  bottom + k * pitch)


def random_quaternion(rng):
    # Uniform over rotations (Shoemake).
    u1, u2, u3 = rng.random(), rng.random(), rng.random()
    a, b = math.sqrt(1 - u1), math.sqrt(u1)
    return (a * math.sin(2 * math.pi * u2), a * math.cos(2 * math.pi * u2),
            b * math.sin(2 * math.pi * u3), b * math.cos(2 * math.pi * u3))


def capsules(count=200):
    # Capsules of radius 4 cm and half-lengths 6 to 12 cm (at most 16 cm from their centres),
    # turned at random, one a cell of 0.34 m.
    import random
    rng = random.Random(200)
    bodies = []
    for n, (x, y, z) in lattice(count, 8, 5, 0.34, 0.25):
        q = random_quaternion(rng)
        bodies.append('<body name="cap%d" pos="%.6f %.6f %.6f" quat="%.9f %.9f %.9f %.9f">'
                      '<freejoint/><geom type="capsule" size="0.04 %.4f"/></body>'
                      % ((n, x, y, z) + q + (rng.uniform(0.06, 0.12),)))
    return mjcf_bin("%d-capsule pile" % count, "%d capsules dropped into a bin" % count, bodies,
                    [], 8, 5, 0.34)


def rocks(count=200):
    # Rocks: the hulls of 12 to 30 points on an ellipsoid of semi-axes 6 to 11 cm, each pulled in
    # by up to 20 %, turned at random, one a cell of 0.28 m (every point within 11 cm of its
    # cell's centre).
    import random
    rng = random.Random(201)
    bodies, assets = [], []
    for n, (x, y, z) in lattice(count, 8, 5, 0.28, 0.2):
        axes = [rng.uniform(0.06, 0.11) for _ in range(3)]
        points = []
        for _ in range(rng.randint(12, 30)):
            d = [rng.gauss(0, 1) for _ in range(3)]
            norm = math.sqrt(sum(c * c for c in d))
            r = rng.uniform(0.8, 1.0)
            points.append(" ".join("%.5f" % (r * a * c / norm) for a, c in zip(axes, d)))
        assets.append('<mesh name="rock%d" vertex="%s"/>' % (n, "  ".join(points)))
        q = random_quaternion(rng)
        bodies.append('<body name="rock%d" pos="%.6f %.6f %.6f" quat="%.9f %.9f %.9f %.9f">'
                      '<freejoint/><geom type="mesh" mesh="rock%d"/></body>'
                      % ((n, x, y, z) + q + (n,)))
    return mjcf_bin("%d-rock pile" % count, "%d convex rocks dropped into a bin" % count, bodies,
                    assets, 8, 5, 0.28)


def mixed(seed):
    # Three layers of 3 x 3 bodies 0.3 m apart (0.26 m between layers), each moved by up to 3 cm,
    # turned about z at random and tilted by up to 0.5 rad about a horizontal axis; a box's sides
    # 8-20 cm, a sphere's radius 4-10 cm, a capsule's or cylinder's radius 3-7 cm and length 5-14
    # cm, an ellipsoid's semi-axes 4-10 cm; masses 0.3-3 kg; mu 0.3, 0.5 or 0.8.
    import random
    rng = random.Random(seed)
    fixed = [GROUND]
    inside = 1.0
    for name, sx, sy, px, py in [("e", 0.1, inside + 0.2, inside / 2 + 0.05, 0),
                                 ("w", 0.1, inside + 0.2, -inside / 2 - 0.05, 0),
                                 ("n", inside, 0.1, 0, inside / 2 + 0.05),
                                 ("s", inside, 0.1, 0, -inside / 2 - 0.05)]:
        fixed.append({"name": "wall_" + name, "shape": "box", "size": [sx, sy, 0.6],
                      "position": [px, py, 0.3]})
    bodies = []
    for layer in range(3):
        for i in range(3):
            for j in range(3):
                kind = rng.choice(["box", "sphere", "capsule", "cylinder", "ellipsoid"])
                position = [-0.3 + 0.3 * i + rng.uniform(-0.03, 0.03),
                            -0.3 + 0.3 * j + rng.uniform(-0.03, 0.03), 0.12 + 0.26 * layer]
                yaw, tilt = rng.uniform(-3, 3), rng.uniform(-0.5, 0.5)
                cy, sy, ct, st = (math.cos(yaw / 2), math.sin(yaw / 2), math.cos(tilt / 2),
                                  math.sin(tilt / 2))
                body = {"name": "m%d" % len(bodies), "shape": kind,
                        "mass": rng.uniform(0.3, 3), "position": position,
                        "orientation": [cy * ct, cy * st, sy * st, sy * ct]}
                if kind == "box":
                    body["size"] = [rng.uniform(0.08, 0.2) for _ in range(3)]
                elif kind == "sphere":
                    body["size"] = [rng.uniform(0.04, 0.1)]
                elif kind in ("capsule", "cylinder"):
                    body["size"] = [rng.uniform(0.03, 0.07), rng.uniform(0.05, 0.14)]
                else:
                    body["size"] = [rng.uniform(0.04, 0.1) for _ in range(3)]
                bodies.append(body)
    return {"name": "mixed-%d" % seed, "stepper": "explicit", "h": 0.01,
            "gravity": [0, 0, -9.81], "duration": 1.0,
            "contact": {"mu": rng.choice([0.3, 0.5, 0.8])}, "fixed": fixed, "bodies": bodies}


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--pile":
        if not sys.argv[2].isdigit() or not 1 <= int(sys.argv[2]) <= 100000:
            sys.exit("--pile: N must be a whole number from 1 to 100000, not %r" % sys.argv[2])
        with open(sys.argv[3], "w") as f:
            json.dump(pile(int(sys.argv[2])), f, indent=1)
            f.write("\n")
    elif len(sys.argv) == 4 and sys.argv[1] == "--mixed":
        if not sys.argv[2].isdigit():
            sys.exit("--mixed: SEED must be a whole number, not %r" % sys.argv[2])
        with open(sys.argv[3], "w") as f:
            json.dump(mixed(int(sys.argv[2])), f, indent=1)
            f.write("\n")
    elif len(sys.argv) == 1:
        os.makedirs(HERE, exist_ok=True)
        write("stack50.json", stack50())
        write("pile200.json", pile(200))
        write("wall100.json", wall100())
        for name, text in [("capsules200.xml", capsules()), ("rocks200.xml", rocks())]:
            with open(os.path.join(HERE, name), "w") as f:
                f.write(text)
    else:
        sys.exit(__doc__)
