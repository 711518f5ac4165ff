// The scene page's one script dependency: Three.js with OrbitControls, exposed as globals so
// the page's own inline script (posttrain/tasks/scene/page.py) needs no module loader.
import * as THREE from "three";
import { OrbitControls } from "three/examples/jsm/controls/OrbitControls.js";

window.THREE = THREE;
window.OrbitControls = OrbitControls;
