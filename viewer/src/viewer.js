// The ncpkit trajectory viewer: plays a run stored in the page (<script id="ncpkit-data">,
// written by `ncpkit simulate --html` or `ncpkit view`) with the scene's shapes, a time
// slider, play / pause, contact points and normals, and the solver statistics of the step
// shown. Bundled with three.js into one script at build time (esbuild).
//
// Data: { scene, stepper, solver, up: [3] (against gravity),
//         bodies: [{name, shape, size: [3], mesh, radius, fixed, pose: [x y z qw qx qy qz]}],
//         meshes: [{vertices: [x y z ...], triangles: [i j k ...]}],
//         moving: [body indices whose poses the frames hold, in order],
//         frames: [{t, poses: [7 per moving body], markers: [[px py pz nx ny nz magnitude]...],
//                   iterations, residual, us, status}] }
// window.ncpkitViewer (for tests and the console): seek(t), frame(), time(), bodyPosition(name),
// bodyQuaternion(name), play(), pause(), nonBlankPixels().
import * as THREE from "three";
import { OrbitControls } from "three/examples/jsm/controls/OrbitControls.js";

const data = JSON.parse(document.getElementById("ncpkit-data").textContent);

const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
renderer.setPixelRatio(window.devicePixelRatio || 1);
renderer.setSize(window.innerWidth, window.innerHeight);
renderer.setClearColor(0xf4f4f0);
document.getElementById("view").appendChild(renderer.domElement);

const scene = new THREE.Scene();
const up = new THREE.Vector3(...data.up).normalize();  // against gravity
const camera = new THREE.PerspectiveCamera(45, window.innerWidth / window.innerHeight, 1e-3, 1e3);
camera.up.copy(up);
scene.add(new THREE.HemisphereLight(0xffffff, 0x606060, 2.0));
const sun = new THREE.DirectionalLight(0xffffff, 1.5);
sun.position.set(3, -2, 5);
scene.add(sun);

const palette = [0x4e79a7, 0xf28e2b, 0x59a14f, 0xe15759, 0x76b7b2, 0xedc948, 0xb07aa1, 0x9c755f];

// A mesh for a body's shape, in its body frame: the triangles the page was given for its kind
// and size (data.meshes, from the shape's row in ncpkit's shape registry); a plane (the
// half-space z <= 0) as a square with a grid.
function shapeMesh(body, index, extent) {
  const color = body.fixed ? 0xb8b8b0 : palette[index % palette.length];
  if (body.shape === "plane") {
    const group = new THREE.Group();
    const plane = new THREE.Mesh(new THREE.PlaneGeometry(extent, extent),
      new THREE.MeshStandardMaterial({ color, side: THREE.DoubleSide, transparent: true,
                                       opacity: 0.8 }));
    const grid = new THREE.GridHelper(extent, 20, 0x909090, 0xc8c8c0);
    grid.rotateX(Math.PI / 2);
    grid.position.z = 1e-4;
    group.add(plane, grid);
    return group;
  }
  let geometry;
  const given = body.mesh >= 0 ? data.meshes[body.mesh] : null;
  if (given) {
    geometry = new THREE.BufferGeometry();
    geometry.setAttribute("position", new THREE.Float32BufferAttribute(given.vertices, 3));
    geometry.setIndex(given.triangles);
    geometry.computeVertexNormals();
  } else {
    geometry = new THREE.SphereGeometry(Math.max(body.radius, 0.01), 8, 8);
  }
  const mesh = new THREE.Mesh(geometry, new THREE.MeshStandardMaterial({ color, roughness: 0.6 }));
  const edges = new THREE.LineSegments(new THREE.EdgesGeometry(geometry, 30),
                                       new THREE.LineBasicMaterial({ color: 0x303030 }));
  mesh.add(edges);
  return mesh;
}

function setPose(object, pose) {
  object.position.set(pose[0], pose[1], pose[2]);
  object.quaternion.set(pose[4], pose[5], pose[6], pose[3]);  // three: (x, y, z, w)
}

// Scene size from the bodies that are not planes, for the camera and the planes.
const box = new THREE.Box3();
for (const body of data.bodies) {
  if (body.shape === "plane") continue;
  const r = body.radius;
  box.expandByPoint(new THREE.Vector3(body.pose[0] - r, body.pose[1] - r, body.pose[2] - r));
  box.expandByPoint(new THREE.Vector3(body.pose[0] + r, body.pose[1] + r, body.pose[2] + r));
}
for (const frame of data.frames) {
  for (let k = 0; k < data.moving.length; ++k) {
    const p = frame.poses.slice(7 * k, 7 * k + 3);
    box.expandByPoint(new THREE.Vector3(p[0], p[1], p[2]));
  }
}
if (box.isEmpty()) box.set(new THREE.Vector3(-1, -1, -1), new THREE.Vector3(1, 1, 1));
const center = box.getCenter(new THREE.Vector3());
const radius = Math.max(box.getSize(new THREE.Vector3()).length() / 2, 0.05);

const objects = data.bodies.map((body, index) => {
  const object = shapeMesh(body, index, 8 * radius);
  setPose(object, body.pose);
  scene.add(object);
  return object;
});

// From the front and a little above: two directions across `up` (for z up: x and -y).
const across = Math.abs(up.x) < 0.9 ? new THREE.Vector3(1, 0, 0) : new THREE.Vector3(0, 1, 0);
const side = across.sub(up.clone().multiplyScalar(across.dot(up))).normalize();
const front = new THREE.Vector3().crossVectors(up, side);
camera.position.copy(center).addScaledVector(side, 1.2 * radius)
  .addScaledVector(front, -2.8 * radius).addScaledVector(up, 1.3 * radius);
camera.near = radius / 100;
camera.far = radius * 100;
camera.updateProjectionMatrix();
const controls = new OrbitControls(camera, renderer.domElement);
controls.target.copy(center);
controls.update();

// Contact markers: a point and an arrow along the normal, length by the magnitude's share.
const markers = new THREE.Group();
scene.add(markers);
const pointGeometry = new THREE.SphereGeometry(radius / 60, 12, 8);
const pointMaterial = new THREE.MeshBasicMaterial({ color: 0xd62728 });
let largest = 0;
for (const frame of data.frames) {
  for (const m of frame.markers) largest = Math.max(largest, Math.abs(m[6]));
}

function showMarkers(frame) {
  while (markers.children.length) {
    const child = markers.children.pop();
    if (child.dispose) child.dispose();
  }
  for (const m of frame.markers) {
    const point = new THREE.Mesh(pointGeometry, pointMaterial);
    point.position.set(m[0], m[1], m[2]);
    markers.add(point);
    const normal = new THREE.Vector3(m[3], m[4], m[5]);
    if (normal.lengthSq() === 0) continue;
    const share = largest > 0 ? Math.abs(m[6]) / largest : 0;
    const length = radius * (0.15 + 0.35 * share);
    markers.add(new THREE.ArrowHelper(normal.normalize(), point.position, length, 0xd62728,
                                      0.25 * length, 0.12 * length));
  }
}

// Controls.
const slider = document.getElementById("time");
const label = document.getElementById("label");
const stats = document.getElementById("stats");
const button = document.getElementById("play");
slider.max = String(Math.max(data.frames.length - 1, 0));
let current = 0;
let playing = false;

function format(x, digits) {
  return x === null || x === undefined ? "-" : Number(x).toPrecision(digits);
}

function showFrame(k) {
  if (!data.frames.length) return;
  current = Math.min(Math.max(k, 0), data.frames.length - 1);
  const frame = data.frames[current];
  data.moving.forEach((b, i) => setPose(objects[b], frame.poses.slice(7 * i, 7 * i + 7)));
  showMarkers(frame);
  slider.value = String(current);
  label.textContent = `t = ${format(frame.t, 6)} s  (step ${current + 1} of ${data.frames.length})`;
  stats.textContent = `${frame.status}, ${frame.iterations} iterations, residual ` +
    `${format(frame.residual, 3)}, ${format(frame.us, 3)} µs, ${frame.markers.length} contact ` +
    (frame.markers.length === 1 ? "point" : "points");
  stats.className = frame.status === "converged" ? "" : "failed";
}

slider.addEventListener("input", () => showFrame(Number(slider.value)));
button.addEventListener("click", () => (playing ? pause() : play()));
document.addEventListener("keydown", (e) => {
  if (e.key === " ") playing ? pause() : play();
  if (e.key === "ArrowRight") showFrame(current + 1);
  if (e.key === "ArrowLeft") showFrame(current - 1);
});

let playStart = 0;
let playFrom = 0;
function play() {
  if (!data.frames.length) return;
  if (current >= data.frames.length - 1) showFrame(0);
  playing = true;
  playStart = performance.now();
  playFrom = data.frames[current].t;
  button.textContent = "pause";
}
function pause() {
  playing = false;
  button.textContent = "play";
}

// The frame at time t: the last one with frame.t <= t (the first one before it starts).
function frameAt(t) {
  let lo = 0;
  let hi = data.frames.length - 1;
  if (hi < 0 || t <= data.frames[0].t) return 0;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (data.frames[mid].t <= t + 1e-12) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

function animate() {
  requestAnimationFrame(animate);
  if (playing) {
    const t = playFrom + (performance.now() - playStart) / 1000;
    const k = frameAt(t);
    if (k !== current) showFrame(k);
    if (k >= data.frames.length - 1) pause();
  }
  controls.update();
  renderer.render(scene, camera);
}

window.addEventListener("resize", () => {
  camera.aspect = window.innerWidth / window.innerHeight;
  camera.updateProjectionMatrix();
  renderer.setSize(window.innerWidth, window.innerHeight);
});

document.getElementById("title").textContent =
  `${data.scene} (${data.stepper}, ${data.solver}): ${data.frames.length} steps`;
showFrame(0);
animate();

function bodyIndex(name) {
  const index = data.bodies.findIndex((b) => b.name === name);
  if (index < 0) throw new Error(`no body ${name}`);
  return index;
}

window.ncpkitViewer = {
  frames: data.frames.length,
  seek(t) {
    pause();
    showFrame(frameAt(t));
    renderer.render(scene, camera);
    return data.frames.length ? data.frames[current].t : 0;
  },
  frame: () => current,
  time: () => (data.frames.length ? data.frames[current].t : 0),
  bodyPosition: (name) => objects[bodyIndex(name)].position.toArray(),
  bodyQuaternion(name) {
    const q = objects[bodyIndex(name)].quaternion;
    return [q.w, q.x, q.y, q.z];
  },
  markers: () => data.frames.length ? data.frames[current].markers.length : 0,
  play,
  pause,
  // Pixels of the canvas that differ from the background colour (a blank page has none).
  nonBlankPixels() {
    renderer.render(scene, camera);
    const gl = renderer.getContext();
    const w = gl.drawingBufferWidth;
    const h = gl.drawingBufferHeight;
    const pixels = new Uint8Array(w * h * 4);
    gl.readPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, pixels);
    let count = 0;
    for (let i = 0; i < pixels.length; i += 4) {
      if (Math.abs(pixels[i] - 0xf4) + Math.abs(pixels[i + 1] - 0xf4) +
          Math.abs(pixels[i + 2] - 0xf0) > 24) ++count;
    }
    return count;
  },
  ready: true,
};
