// The scene page's renderer: reads the scene from #scene-data and draws it with Three.js
// (bundled into the page, window.THREE and window.OrbitControls). Each answer object is one
// mesh in the "objects" group; window.sceneInfo reports what was drawn, for tests and tools.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("scene-data").textContent);
  const host = document.getElementById("view");
  const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
  renderer.setPixelRatio(window.devicePixelRatio || 1);
  renderer.setSize(host.clientWidth, host.clientHeight);
  renderer.shadowMap.enabled = true;
  host.appendChild(renderer.domElement);

  const scene = new THREE.Scene();
  scene.background = new THREE.Color(0xeef1f5);
  const room = data.room;
  const span = Math.max(room.width, room.depth, 2);

  scene.add(new THREE.HemisphereLight(0xffffff, 0x8090a0, 1.4));
  const sun = new THREE.DirectionalLight(0xffffff, 2.0);
  sun.position.set(span * 0.6, span * 1.2, span * 0.8);
  sun.castShadow = true;
  sun.shadow.mapSize.set(1024, 1024);
  const reach = span;
  Object.assign(sun.shadow.camera, { left: -reach, right: reach, top: reach, bottom: -reach, far: span * 4 });
  scene.add(sun);

  const ground = new THREE.Mesh(
    new THREE.PlaneGeometry(room.width, room.depth),
    new THREE.MeshStandardMaterial({ color: 0xd8d2c4, roughness: 0.95 })
  );
  ground.rotation.x = -Math.PI / 2;
  ground.receiveShadow = true;
  ground.name = "ground";
  scene.add(ground);
  const walls = new THREE.LineSegments(
    new THREE.EdgesGeometry(new THREE.BoxGeometry(room.width, room.height, room.depth)),
    new THREE.LineBasicMaterial({ color: 0x7a8594 })
  );
  walls.position.y = room.height / 2;
  scene.add(walls);
  if (data.clear_path) {
    const band = data.clear_path;
    const path = new THREE.Mesh(
      new THREE.PlaneGeometry(room.width, band.z_max - band.z_min),
      new THREE.MeshBasicMaterial({ color: 0x3fa34d, transparent: true, opacity: 0.25 })
    );
    path.rotation.x = -Math.PI / 2;
    path.position.set(0, 0.002, (band.z_min + band.z_max) / 2);
    path.name = "clear_path";
    scene.add(path);
  }

  const objects = new THREE.Group();
  objects.name = "objects";
  for (const obj of data.objects) {
    const [w, h, d] = obj.size;
    let geometry;
    if (obj.shape === "sphere") {
      geometry = new THREE.SphereGeometry(0.5, 32, 16);
      geometry.scale(w, h, d);
    } else if (obj.shape === "cylinder") {
      geometry = new THREE.CylinderGeometry(0.5, 0.5, 1, 32);
      geometry.scale(w, h, d);
    } else {
      geometry = new THREE.BoxGeometry(w, h, d);
    }
    const failed = data.failed_objects.includes(obj.id);
    const material = new THREE.MeshStandardMaterial({
      color: new THREE.Color(data.colors[obj.color.toLowerCase()] || obj.color),
      roughness: 0.6,
      emissive: failed ? 0x661111 : 0x000000,
    });
    const mesh = new THREE.Mesh(geometry, material);
    mesh.position.set(obj.position[0], obj.position[1] + h / 2, obj.position[2]);
    mesh.rotation.y = (obj.rotation * Math.PI) / 180;
    mesh.castShadow = true;
    mesh.receiveShadow = true;
    mesh.name = obj.id;
    mesh.userData.sceneObject = true;
    objects.add(mesh);
  }
  scene.add(objects);

  const camera = new THREE.PerspectiveCamera(45, host.clientWidth / host.clientHeight, 0.05, span * 20);
  camera.position.set(span * 0.6, span * 0.85, span * 1.35);
  const controls = new OrbitControls(camera, renderer.domElement);
  controls.target.set(0, 0.5, 0);
  controls.enableDamping = true;
  controls.update();

  let meshes = 0;
  scene.traverse((node) => {
    if (node.isMesh && node.userData.sceneObject) meshes += 1;
  });
  window.sceneInfo = { objects: data.objects.length, meshes: meshes, ids: data.objects.map((o) => o.id), frames: 0 };

  window.addEventListener("resize", () => {
    camera.aspect = host.clientWidth / host.clientHeight;
    camera.updateProjectionMatrix();
    renderer.setSize(host.clientWidth, host.clientHeight);
  });
  function frame() {
    controls.update();
    renderer.render(scene, camera);
    window.sceneInfo.frames += 1;
    requestAnimationFrame(frame);
  }
  frame();
})();
