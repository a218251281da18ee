"""Connect Four's own knowledge: Allis' strategic rules, which decide positions of a placement
game with Connect Four's rules, with a certificate the book carries (kind 2)."""
