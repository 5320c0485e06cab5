"""What collision_server and orca_node share as managed nodes: the ROS 2 lifecycle (as Nav2's
nodes, so ``nav2_lifecycle_manager`` can run them), ``autostart``, and kernels warmed up in
the background so that a node answers from its first second.

Lifecycle. :class:`ManagedNode` is an ``rclpy.lifecycle.LifecycleNode``: *configure* reads and
checks the parameters and creates the node's subscriptions, publishers, services and timers
(:meth:`configure`); *activate* starts serving and commanding; *deactivate* stops (the node's
:meth:`deactivate`: orca_node sends one zero command per robot); *cleanup* and *shutdown*
release everything (:meth:`cleanup`). With ``autostart`` (default true) the node configures
and activates itself, as a plain node would; set it false when a lifecycle manager drives it.
A configure that fails (a bad parameter) leaves the node unconfigured and logs why; with
``autostart`` the process then exits with that error.

Warm-up. Compiling the numba kernels takes a minute on a cold cache (the first start after
``colcon build`` without ``ros2 run planning_collision warmup``). The node never waits for it:
when numba's cache lacks them, a background thread has ``python -m planning_collision.warmup
<cores>`` compile them into the cache in a separate process (so the compiler never holds this
process's interpreter lock); then it loads them here (well under a second) and sets
:attr:`kernels_ready`. Until then
the node spins: services answer ``success: false`` saying the kernels are warming up, and
orca_node commands zero velocity.
"""

from __future__ import annotations

import gc
import importlib
import os
import signal
import subprocess
import sys
import threading
import time

from lifecycle_msgs.msg import State
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from rclpy.publisher import Publisher
from rclpy.service import Service
from rclpy.subscription import Subscription
from rclpy.timer import Timer

from planning_collision.warmup import cached

from .parameters import Param, ParameterError

AUTOSTART = Param("autostart", True, "Configure and activate at start (as a plain node). False: "
                  "wait for a lifecycle manager (e.g. nav2_lifecycle_manager) to drive the "
                  "configure and activate transitions.")


class ManagedNode(LifecycleNode):
    """A lifecycle node with ``autostart`` and a background kernel warm-up; subclasses
    implement :meth:`configure`, :meth:`activate`, :meth:`deactivate`, :meth:`cleanup`,
    declare their parameters (``AUTOSTART`` among them) as ``self.params``, and call
    :meth:`start` at the end of their ``__init__``."""

    #: the pure cores whose kernels the node uses (see planning_collision.warmup)
    KERNELS: tuple[str, ...] = ()

    def __init__(self, node_name: str, **kwargs):
        super().__init__(node_name, **kwargs)
        self.kernels_ready = threading.Event()
        self.active = False
        self.configure_error = ""
        self._owned: list = []  # what configure created: released by cleanup
        self._compiler: subprocess.Popen | None = None  # the warm-up's compiling process

    # ------------------------------------------------------------------ for subclasses
    def configure(self) -> None:
        """Read and check the parameters, create what the node uses (ParameterError)."""

    def activate(self) -> None:
        """Start serving or commanding."""

    def deactivate(self) -> None:
        """Stop serving or commanding (orca_node: one zero command per robot)."""

    def cleanup(self) -> None:
        """Release what :meth:`configure` set up besides its subscriptions, publishers,
        timers and services (the base class destroys those first, before this runs)."""

    def start(self) -> None:
        """Start the kernel warm-up (in the background) and, with ``autostart``, configure
        and activate now; ParameterError if configuring failed."""
        threading.Thread(target=self._warm_up, name="kernel-warmup", daemon=True).start()
        if not self.params.autostart:
            self.get_logger().info("unconfigured: waiting for the configure transition "
                                   "(autostart is false)")
            return
        if self.trigger_configure() != TransitionCallbackReturn.SUCCESS:
            raise ParameterError(self.configure_error or "configure failed")
        self.trigger_activate()

    def destroy_node(self) -> None:
        """Destroy the node, and with it its lifecycle state machine. rclpy's LifecycleNode
        (Jazzy, Kilted) leaves the state machine alive, and the state machine holds the rcl
        node: the DDS participant then kept announcing the node, its lifecycle services
        included, for as long as the Python object lived (issue #21: the in-process nodes of
        earlier tests, kept referenced, answered a later /orca_node's graph queries, and a
        lifecycle manager's configure went to one of them and was lost)."""
        super().destroy_node()
        self._state_machine.destroy_when_not_in_use()

    def _entities(self) -> set:
        return {*self.subscriptions, *self.publishers, *self.timers, *self.services}

    def _release(self) -> None:
        """Destroy every subscription, publisher, timer and service that configure created,
        then run the subclass's :meth:`cleanup`. In that order: a timer or a message of a
        configured subscription can no longer run a callback (on another executor thread,
        as collision_server's queries do) against the state cleanup has just released."""
        entities, self._owned = self._owned, []
        for entity in entities:
            for kind, destroy in ((Subscription, self.destroy_subscription),
                                  (Publisher, self.destroy_publisher),
                                  (Timer, self.destroy_timer),
                                  (Service, self.destroy_service)):
                if isinstance(entity, kind):
                    destroy(entity)
                    break
        self.cleanup()

    @property
    def state(self) -> str:
        """The lifecycle state's label (unconfigured, inactive, active, finalized)."""
        return self._state_machine.current_state[1]

    def not_serving(self) -> str:
        """Why a request cannot be answered now ('' when it can)."""
        if not self.active:
            return f"{self.get_name()} is {self.state} (lifecycle): not serving"
        if not self.kernels_ready.is_set():
            return f"{self.get_name()} is starting: its kernels are warming up"
        return ""

    # ------------------------------------------------------------------ transitions
    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        before = self._entities()
        try:
            self.configure()
        except ParameterError as exc:
            self.configure_error = str(exc)
            self.get_logger().error(f"configure failed: {exc}")
            self._owned = list(self._entities() - before)
            self._release()
            return TransitionCallbackReturn.FAILURE
        self._owned = list(self._entities() - before)
        self.configure_error = ""
        return TransitionCallbackReturn.SUCCESS

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        self.activate()
        self.active = True
        self.get_logger().info("active" + ("" if self.kernels_ready.is_set()
                                           else " (kernels still warming up)"))
        return TransitionCallbackReturn.SUCCESS

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        self.active = False
        self.deactivate()
        self.get_logger().info("inactive")
        return TransitionCallbackReturn.SUCCESS

    def on_cleanup(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._release()
        return TransitionCallbackReturn.SUCCESS

    def on_shutdown(self, state: LifecycleState) -> TransitionCallbackReturn:
        if self.active:
            self.active = False
            self.deactivate()
        if state.state_id != State.PRIMARY_STATE_UNCONFIGURED:
            self._release()
        return TransitionCallbackReturn.SUCCESS

    def on_error(self, state: LifecycleState) -> TransitionCallbackReturn:
        self.active = False
        self._release()
        return TransitionCallbackReturn.SUCCESS  # back to unconfigured

    def close(self) -> None:
        """run_node's last call before the DDS teardown: stop as deactivate would, and end
        a kernel compilation still under way (it would outlive the node)."""
        if self._compiler is not None and self._compiler.poll() is None:
            try:  # the warm-up and the compiling processes it started: one process group
                os.killpg(self._compiler.pid, signal.SIGKILL)
            except OSError:
                self._compiler.kill()
        if self.active:
            self.active = False
            self.deactivate()

    # ------------------------------------------------------------------ warm-up
    def _warm_up(self) -> None:
        started = time.perf_counter()
        log = self.get_logger()
        try:
            if not cached(self.KERNELS):
                log.info("kernels not in numba's cache: compiling them in a separate process "
                         "(run 'ros2 run planning_collision warmup' after installing to skip "
                         "this)")
                self._compiler = subprocess.Popen(
                    [sys.executable, "-m", "planning_collision.warmup", *self.KERNELS],
                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                    process_group=0)
                _, errors = self._compiler.communicate(timeout=900.0)
                if self._compiler.returncode != 0:  # compile here: slower, still right
                    log.warning(f"kernel warm-up in a separate process failed "
                                f"({errors.strip()[-300:]}); compiling in this one")
            for name in self.KERNELS:
                importlib.import_module(f"planning_collision.{name}").warmup()
        except Exception as exc:  # the kernels then compile on first use
            log.error(f"kernel warm-up failed: {type(exc).__name__}: {exc}")
        # What is alive now (modules, kernels, the node) lives as long as the process: out of
        # the cycle collector's sight, a full collection during a large request scans only
        # what the request made (scanning the start-up objects took 70-90 ms, interpreter
        # lock held, every time).
        gc.freeze()
        self.kernels_ready.set()
        log.info(f"kernels ready in {time.perf_counter() - started:.2f} s")
