#ifndef ENGINE_H
#define ENGINE_H
// TODO: document the public API
int engine_run(void);
#endif
