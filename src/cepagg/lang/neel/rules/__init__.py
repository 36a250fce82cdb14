"""The NEEL rewrite rules, one module each (Mo Liu, "Extending Event Sequence Processing: New
Models and Optimization Techniques", PhD dissertation, WPI, 2012, §5.2, Tables 5.2-5.4)."""
