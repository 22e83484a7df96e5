"""The wizard's seven pages: welcome, machine, choose, plan, install, verify, done."""
